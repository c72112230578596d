/**
 * The outbound URL policy (spec 4.6 rule 7, 4.7 rule 6): which addresses a
 * registered URL may point to, and the checks that need no DNS.
 */
import { assert, describe, it } from "@effect/vitest"
import { checkUrlShape, forbiddenAddress, isLinkLocal } from "../../../src/outbound/UrlPolicy.ts"

const refused = (address: string) => {
  const reason = forbiddenAddress(address)
  assert.isString(reason, `${address} should be refused`)
}

const allowed = (address: string) => {
  assert.isUndefined(forbiddenAddress(address), `${address} should be allowed`)
}

/** The shape check refuses `raw`; returns the reason. */
const shapeRefused = (raw: string, allowPrivate = false): string => {
  const result = checkUrlShape(raw, allowPrivate)
  if (typeof result !== "string") return assert.fail(`${raw} should be refused, got ${JSON.stringify(result)}`)
  assert.isNotEmpty(result)
  return result
}

/** The shape check accepts `raw`; returns the check. */
const shapeAccepted = (raw: string, allowPrivate = false) => {
  const result = checkUrlShape(raw, allowPrivate)
  if (typeof result === "string") return assert.fail(`${raw} should be accepted, got: ${result}`)
  return result
}

describe("forbiddenAddress", () => {
  it("refuses loopback addresses", () => {
    refused("127.0.0.1")
    refused("127.5.5.5")
    refused("127.255.255.255")
    refused("::1")
  })

  it("refuses the private ranges 10/8, 172.16/12 and 192.168/16", () => {
    refused("10.0.0.1")
    refused("10.255.255.255")
    refused("172.16.0.1")
    refused("172.20.1.1")
    refused("172.31.255.255")
    refused("192.168.0.1")
    refused("192.168.255.254")
  })

  it("the 172.16/12 range ends at 172.31.255.255, and its neighbours are public", () => {
    allowed("172.32.0.1")
    allowed("172.15.255.255")
    allowed("11.0.0.1")
    allowed("192.169.0.1")
  })

  it("refuses carrier-grade NAT 100.64/10 but not its neighbours", () => {
    refused("100.64.0.1")
    refused("100.127.255.255")
    allowed("100.63.255.255")
    allowed("100.128.0.1")
  })

  it("refuses unique-local IPv6 fc00::/7", () => {
    refused("fc00::1")
    refused("fd12:3456:789a::1")
  })

  it("refuses link-local addresses, including the cloud metadata endpoint", () => {
    refused("169.254.169.254")
    refused("169.254.0.1")
    refused("fe80::1")
  })

  it("refuses the unspecified addresses", () => {
    refused("0.0.0.0")
    refused("::")
  })

  it("refuses multicast addresses", () => {
    refused("224.0.0.1")
    refused("239.255.255.250")
    refused("ff02::1")
  })

  it("judges an IPv4-mapped IPv6 address by the IPv4 address it carries", () => {
    refused("::ffff:10.0.0.1")
    refused("::ffff:127.0.0.1")
    refused("::ffff:7f00:1")
    refused("::ffff:a9fe:a9fe")
    allowed("::ffff:93.184.215.14")
  })

  it("judges an IPv4-compatible IPv6 address by its IPv4 address however it is written", () => {
    // `::10.0.0.1` and `::a00:1` are the same address (and `new URL` writes the first as the second).
    refused("::10.0.0.1")
    refused("::a00:1")
    refused("::127.0.0.1")
    refused("::7f00:1")
    shapeRefused("https://[::127.0.0.1]/hook")
    shapeRefused("https://[::10.0.0.1]/hook")
  })

  it("allows public addresses", () => {
    allowed("93.184.215.14")
    allowed("8.8.8.8")
    allowed("2606:4700::1111")
    allowed("2001:4860:4860::8888")
  })

  it("a name is not an address", () => {
    refused("example.com")
  })
})

describe("checkUrlShape", () => {
  it("accepts an https URL on a public address, with nothing left to resolve", () => {
    const check = shapeAccepted("https://93.184.215.14/hook")
    assert.strictEqual(check.url.toString(), "https://93.184.215.14/hook")
    assert.isUndefined(check.hostname)
    assert.isUndefined(shapeAccepted("https://[2606:4700::1111]/x").hostname)
  })

  it("accepts an https URL on a fully qualified name, leaving the name to resolve", () => {
    const check = shapeAccepted("https://hooks.example.com/review?x=1")
    assert.strictEqual(check.hostname, "hooks.example.com")
    assert.strictEqual(check.url.toString(), "https://hooks.example.com/review?x=1")
    assert.strictEqual(shapeAccepted("https://hooks.example.com./x").hostname, "hooks.example.com")
  })

  it("refuses http and other schemes", () => {
    shapeRefused("http://93.184.215.14/hook")
    shapeRefused("http://hooks.example.com/hook")
    shapeRefused("ftp://hooks.example.com/hook")
    shapeRefused("file:///etc/passwd")
  })

  it("refuses what is not an absolute URL", () => {
    shapeRefused("not a url")
    shapeRefused("/relative/path")
    shapeRefused("")
  })

  it("refuses credentials in the URL", () => {
    shapeRefused("https://user:pass@hooks.example.com/hook")
    shapeRefused("https://user@hooks.example.com/hook")
    shapeRefused("https://:pass@93.184.215.14/hook")
  })

  it("refuses literal addresses that are not public", () => {
    shapeRefused("https://127.0.0.1/hook")
    shapeRefused("https://10.0.0.1/hook")
    shapeRefused("https://172.31.255.255/hook")
    shapeRefused("https://192.168.1.1/hook")
    shapeRefused("https://100.64.0.1/hook")
    shapeRefused("https://169.254.169.254/latest/meta-data")
    shapeRefused("https://0.0.0.0/hook")
    shapeRefused("https://224.0.0.1/hook")
    shapeRefused("https://[::1]/hook")
    shapeRefused("https://[fe80::1]/hook")
    shapeRefused("https://[fc00::1]/hook")
    shapeRefused("https://[::ffff:10.0.0.1]/hook")
    shapeRefused("https://[::ffff:7f00:1]/hook")
  })

  it("refuses loopback written in other IPv4 notations", () => {
    // The URL parser normalizes these to 127.0.0.1.
    shapeRefused("https://2130706433/hook")
    shapeRefused("https://0x7f000001/hook")
    shapeRefused("https://127.1/hook")
  })

  it("refuses bare hostnames", () => {
    shapeRefused("https://intranet/hook")
    shapeRefused("https://metadata/computeMetadata")
  })

  it("refuses localhost and its subdomains", () => {
    shapeRefused("https://localhost/hook")
    shapeRefused("https://localhost./hook")
    shapeRefused("https://x.localhost/hook")
    shapeRefused("https://a.b.LOCALHOST/hook")
  })

  it("with allowPrivate, http and private addresses are accepted", () => {
    assert.strictEqual(shapeAccepted("http://127.0.0.1/hook", true).url.toString(), "http://127.0.0.1/hook")
    shapeAccepted("http://127.0.0.1:8080/hook", true)
    shapeAccepted("https://10.0.0.1/hook", true)
    shapeAccepted("http://localhost:3000/hook", true)
  })

  it("with allowPrivate, schemes other than http(s) and non-URLs are still refused", () => {
    shapeRefused("ftp://127.0.0.1/x", true)
    shapeRefused("file:///etc/passwd", true)
    shapeRefused("not a url", true)
  })
})

describe("isLinkLocal", () => {
  it("is true for link-local and cloud metadata addresses, however written, and for nothing else", () => {
    for (const address of ["169.254.169.254", "169.254.0.1", "fe80::1", "::ffff:169.254.169.254", "fd00:ec2::254"]) {
      assert.isTrue(isLinkLocal(address), address)
    }
    assert.isTrue(isLinkLocal("100.100.100.200"), "Alibaba Cloud's metadata address")
    for (const address of ["127.0.0.1", "10.0.0.1", "::1", "fc00::1", "93.184.215.14", "169.255.0.1", "not an ip"]) {
      assert.isFalse(isLinkLocal(address), address)
    }
  })
})
