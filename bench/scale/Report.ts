/** The scale benchmark's tables (markdown, ready for the README). */
import * as os from "node:os"
import { fmt, mib, percentile, sortedAsc, table } from "../support/Table.ts"
import type { ParkedResult } from "./Parked.ts"
import type { Latencies, StreamsResult } from "./Streams.ts"
import type { ThroughputRow } from "./Throughput.ts"

const kib = (bytes: number) => fmt(bytes / 1024)
const p = (values: ReadonlyArray<number>, q: number) => fmt(percentile(sortedAsc(values), q))
const seconds = (ms: number) => fmt(ms / 1000, 2)

export const machineLine = (pgVersion: string): string => {
  const cpus = os.cpus()
  return `${cpus[0]?.model.trim() ?? "unknown CPU"} x ${cpus.length}, ${
    (os.totalmem() / 2 ** 30).toFixed(1)
  } GiB RAM, ` +
    `${os.type()} ${os.release()}, Node ${process.version}, ${pgVersion.split(" on ")[0]}`
}

export const loadLine = (label: string): string =>
  `${label}: load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`

export const streamsTables = (r: StreamsResult): string => {
  const opened = r.answered
  const perStream = (a: number, b: number) => (opened > 0 ? kib((b - a) / opened) : "-")
  const memory = table(
    [
      "streams open",
      "opened in s",
      "heap before MiB",
      "heap open MiB",
      "heap/stream KiB",
      "RSS before MiB",
      "RSS open MiB",
      "RSS/stream KiB",
      "heap after close MiB",
      "idle CPU (cores)"
    ],
    [[
      `${opened} of ${r.streams}`,
      fmt(r.openSeconds),
      mib(r.before.heapUsed),
      mib(r.open.heapUsed),
      perStream(r.before.heapUsed, r.open.heapUsed),
      mib(r.before.rss),
      mib(r.open.rss),
      perStream(r.before.rss, r.open.rss),
      mib(r.afterClose.heapUsed),
      fmt(r.idleCores, 3)
    ]]
  )
  const row = (label: string, open: number, l: Latencies) => [
    label,
    String(open),
    String(l.doneMs.length),
    p(l.firstChunkMs, 50),
    p(l.firstChunkMs, 99),
    p(l.doneMs, 50),
    p(l.doneMs, 99),
    String(l.bad)
  ]
  const latency = table(
    [
      "approvals (one at a time)",
      "streams open",
      "runs",
      "first chunk p50 ms",
      "p99 ms",
      "stream end p50 ms",
      "p99 ms",
      "bad"
    ],
    [row("few streams open", r.few.doneMs.length + r.few.bad, r.few), row("all streams open", opened, r.loaded)]
  )
  const census =
    `After the approvals under load: ${r.census.waiting} streams still waiting, ${r.census.ended} ended, ${r.census.failed} failed` +
    (r.firstError === undefined ? "." : `; first error: ${r.firstError}`)
  return [memory, latency, census].join("\n\n")
}

export const parkedTables = (r: ParkedResult): string => {
  const growth = table(
    ["runs parked", "parked/s", "heap MiB", "RSS MiB", "external MiB"],
    r.checkpoints.map((
      c
    ) => [String(c.parked), fmt(c.rate), mib(c.memory.heapUsed), mib(c.memory.rss), mib(c.memory.external)])
  )
  const rest = table(
    [
      "node at rest",
      "start: listening s",
      "first request s",
      "heap MiB",
      "RSS MiB",
      "DB rows read/s",
      "statements/s",
      "idle CPU (cores)",
      "/metrics ms",
      "approval: first chunk p50 ms",
      "stream end p50 ms"
    ],
    [r.empty, r.full].map((a) => [
      `${a.parked} parked`,
      seconds(a.restart.listeningMs),
      seconds(a.restart.firstRequestMs),
      mib(a.memory.heapUsed),
      mib(a.memory.rss),
      fmt(a.rowsReadPerSec, 0),
      fmt(a.statementsPerSec),
      fmt(a.idleCores, 3),
      fmt(a.scrapeMs),
      p(a.resume.map((x) => x.firstChunkMs), 50),
      p(a.resume.map((x) => x.doneMs), 50)
    ])
  )
  return `${growth}\n\nParking took ${fmt(r.createSeconds)} s in all (${
    fmt(r.full.parked / r.createSeconds)
  } runs/s).\n\n${rest}`
}

export const throughputTable = (rows: ReadonlyArray<ThroughputRow>): string =>
  table(
    [
      "scenario",
      "runner processes",
      "clients",
      "turns",
      "turns/s",
      "p50 ms",
      "p99 ms",
      "CPU svc (cores)",
      "CPU pg (cores)"
    ],
    [...rows].sort((a, b) => a.scenario.localeCompare(b.scenario) || a.processes - b.processes).map((r) => [
      r.scenario,
      String(r.processes),
      String(r.clients),
      r.failed > 0 ? `${r.turns} (${r.failed} failed)` : String(r.turns),
      fmt(r.turnsPerSec),
      fmt(r.p50),
      fmt(r.p99),
      fmt(r.serviceCores, 2),
      fmt(r.postgresCores, 2)
    ])
  )
