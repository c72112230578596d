/**
 * A DOCX-named zip bomb: one entry of `bytes` zeros deflated to a few
 * hundred KiB, streamed so that the test never holds the inflated bytes.
 */
import { crc32, createDeflateRaw } from "node:zlib"

const zeros = Buffer.alloc(1024 * 1024)

const deflated = (bytes: number): Promise<{ readonly data: Buffer; readonly crc: number }> =>
  new Promise((resolve, reject) => {
    const deflate = createDeflateRaw({ level: 9 })
    const chunks: Array<Buffer> = []
    let crc = 0
    deflate.on("data", (chunk: Buffer) => chunks.push(chunk))
    deflate.on("error", reject)
    deflate.on("end", () => resolve({ data: Buffer.concat(chunks), crc }))
    const write = (left: number) => {
      while (left > 0) {
        const chunk = zeros.subarray(0, Math.min(left, zeros.length))
        crc = crc32(chunk, crc)
        left -= chunk.length
        if (!deflate.write(chunk)) return void deflate.once("drain", () => write(left))
      }
      deflate.end()
    }
    write(bytes)
  })

/** A zip whose `word/document.xml` inflates to `bytes` bytes. */
export const docxBomb = async (bytes: number): Promise<Buffer> => {
  const name = Buffer.from("word/document.xml")
  const { crc, data } = await deflated(bytes)
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(20, 4)
  local.writeUInt16LE(8, 8) // deflate
  local.writeUInt32LE(crc >>> 0, 14)
  local.writeUInt32LE(data.length, 18)
  local.writeUInt32LE(bytes, 22)
  local.writeUInt16LE(name.length, 26)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  central.writeUInt16LE(20, 6)
  central.writeUInt16LE(8, 10)
  central.writeUInt32LE(crc >>> 0, 16)
  central.writeUInt32LE(data.length, 20)
  central.writeUInt32LE(bytes, 24)
  central.writeUInt16LE(name.length, 28)
  const directoryAt = local.length + name.length + data.length
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + name.length, 12)
  end.writeUInt32LE(directoryAt, 16)
  return Buffer.concat([local, name, data, central, name, end])
}
