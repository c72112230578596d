/**
 * The SSRF corpus (issue 15): URL forms that all reach a loopback, private,
 * link-local or unspecified address (or hide one from another parser), each
 * of which the outbound URL policy must refuse wherever a user registers a
 * URL. The names resolve through the test's DNS server (`records`); the
 * public name is the control that every registration accepts.
 */

/** What the test's DNS server answers: names written as a resolver asks for them (IDN in punycode). */
export const records: Readonly<Record<string, string | ReadonlyArray<string>>> = {
  "public.example.com": "93.184.215.14",
  "evil.example.com": "10.0.0.7",
  "meta.example.com": "169.254.169.254",
  "loop.example.com": "127.0.0.1",
  "zero.example.com": "0.0.0.0",
  "cgnat.example.com": "100.64.0.9",
  // AAAA answers: loopback, IPv4-mapped private, and a public A beside a private AAAA.
  "six.example.com": "::1",
  "mapped.example.com": "::ffff:10.0.0.7",
  "mixed.example.com": ["93.184.215.14", "fd00::7"],
  // bücher.example.com and 例え.example.com
  "xn--bcher-kva.example.com": "10.0.0.8",
  "xn--r8jz45g.example.com": "127.0.0.1"
}

/** A URL the policy accepts in every field: a public name over https. */
export const publicUrl = "https://public.example.com/x"

export interface Form {
  /** What the form is, for the failure message. */
  readonly what: string
  readonly url: string
  /** What the refusal's message must say, where the reason matters (DNS answers, not a failed lookup). */
  readonly because?: RegExp
}

/** A name refused for what it resolves to. */
const resolvesPrivate = /resolves to .*loopback, private/

const literal: ReadonlyArray<Form> = [
  { what: "decimal IPv4", url: "https://2130706433/x" },
  { what: "octal IPv4", url: "https://017700000001/x" },
  { what: "octal dotted IPv4", url: "https://0177.0.0.1/x" },
  { what: "hex IPv4", url: "https://0x7f000001/x" },
  { what: "hex dotted IPv4", url: "https://0x7f.0.0.1/x" },
  { what: "short IPv4", url: "https://127.1/x" },
  { what: "decimal IPv4 of the metadata address", url: "https://2852039166/latest/meta-data" },
  { what: "metadata address", url: "https://169.254.169.254/latest/meta-data" },
  { what: "private 10/8", url: "https://10.0.0.1/x" },
  { what: "carrier-grade NAT", url: "https://100.64.0.1/x" },
  { what: "0.0.0.0", url: "https://0.0.0.0/x" },
  { what: "0 (0.0.0.0)", url: "https://0/x" },
  { what: "[::]", url: "https://[::]/x" },
  { what: "[::1]", url: "https://[::1]/x" },
  { what: "IPv4-mapped IPv6, dotted", url: "https://[::ffff:127.0.0.1]/x" },
  { what: "IPv4-mapped IPv6, hex", url: "https://[::ffff:7f00:1]/x" },
  { what: "IPv4-mapped IPv6, written out", url: "https://[0:0:0:0:0:ffff:169.254.169.254]/x" },
  { what: "IPv4-compatible IPv6", url: "https://[::127.0.0.1]/x" },
  { what: "IPv4-translated IPv6", url: "https://[::ffff:0:10.0.0.1]/x" },
  { what: "6to4 of loopback", url: "https://[2002:7f00:1::1]/x" },
  { what: "NAT64 of a private address", url: "https://[64:ff9b::10.0.0.1]/x" },
  { what: "IPv6 link-local", url: "https://[fe80::1]/x" },
  { what: "IPv6 site-local", url: "https://[fec0::1]/x" },
  { what: "IPv6 unique local", url: "https://[fd12:3456::1]/x" },
  { what: "Teredo", url: "https://[2001::1]/x" },
  { what: "trailing dot on an IP", url: "https://127.0.0.1./x" },
  { what: "trailing dot on a numeric IP", url: "https://2130706433./x" }
]

const tricks: ReadonlyArray<Form> = [
  { what: "http", url: "http://public.example.com/x" },
  { what: "mixed-case http", url: "HtTp://public.example.com/x" },
  { what: "mixed-case scheme to loopback", url: "HTTPS://127.0.0.1/x" },
  { what: "upper-case localhost", url: "HTTPS://LOCALHOST/x" },
  { what: "localhost with a trailing dot", url: "https://localhost./x" },
  { what: "a subdomain of localhost", url: "https://api.localhost/x" },
  { what: "a bare hostname", url: "https://intranet/x" },
  { what: "userinfo and password", url: "https://user:pass@public.example.com/x" },
  { what: "userinfo naming a public host before a private one", url: "https://public.example.com@127.0.0.1/x" },
  { what: "userinfo with a port-like password", url: "https://public.example.com:443@10.0.0.1/x" },
  { what: "fragment hiding a public host", url: "https://127.0.0.1#@public.example.com/x" },
  { what: "query hiding a public host", url: "https://127.0.0.1?@public.example.com/x" },
  {
    what: "backslash before @ (read as a path by WHATWG, as userinfo by curl)",
    url: "https://public.example.com\\@127.0.0.1/x"
  },
  { what: "backslashes for slashes", url: "https:\\\\127.0.0.1\\x" },
  { what: "tab inside the host", url: "https://127.0.\t0.1/x" },
  { what: "percent-encoded host", url: "https://%31%32%37.0.0.1/x" },
  { what: "full-width digits", url: "https://１２７.０.０.１/x" },
  { what: "ideographic full stops", url: "https://127。0。0。1/x" },
  { what: "circled digits", url: "https://①②⑦.0.0.1/x" },
  { what: "circled letters spelling localhost", url: "https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/x" },
  { what: "a circled letter in localhost", url: "https://ⓛocalhost/x" },
  { what: "IPv6 with a zone", url: "https://[fe80::1%25eth0]/x" },
  { what: "not http at all", url: "file:///etc/passwd" },
  { what: "gopher", url: "gopher://public.example.com/x" }
]

const throughDns: ReadonlyArray<Form> = [
  { what: "name resolving to 10/8", url: "https://evil.example.com/x", because: resolvesPrivate },
  { what: "name resolving to the metadata address", url: "https://meta.example.com/x", because: resolvesPrivate },
  { what: "name resolving to loopback", url: "https://loop.example.com/x", because: resolvesPrivate },
  { what: "name resolving to 0.0.0.0", url: "https://zero.example.com/x", because: resolvesPrivate },
  { what: "name resolving to carrier-grade NAT", url: "https://cgnat.example.com/x", because: resolvesPrivate },
  { what: "name with an AAAA of ::1", url: "https://six.example.com/x", because: resolvesPrivate },
  { what: "name with an IPv4-mapped private AAAA", url: "https://mapped.example.com/x", because: resolvesPrivate },
  { what: "name with a public A and a private AAAA", url: "https://mixed.example.com/x", because: resolvesPrivate },
  {
    what: "private name in mixed case with a trailing dot",
    url: "https://EVIL.Example.COM./x",
    because: resolvesPrivate
  },
  { what: "private name with full-width dots", url: "https://evil．example．com/x", because: resolvesPrivate },
  { what: "IDN resolving to a private address", url: "https://bücher.example.com/x", because: resolvesPrivate },
  {
    what: "IDN in punycode resolving to a private address",
    url: "https://xn--bcher-kva.example.com/x",
    because: resolvesPrivate
  },
  { what: "IDN resolving to loopback", url: "https://例え.example.com/x", because: resolvesPrivate },
  { what: "name that does not resolve", url: "https://nowhere.example.com/x", because: /does not resolve/ }
]

/** Every form, each of which must be refused with 400 url_not_allowed. */
export const corpus: ReadonlyArray<Form> = [...literal, ...tricks, ...throughDns]
