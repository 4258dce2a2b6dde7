// Dumps an ai-dynamo/aiconfigurator perf table (a zstd-compressed parquet
// file) to CSV on stdout. Needs Node.js and, in this folder or above it,
// `npm install hyparquet hyparquet-compressors` (the npm registry).
//   node scripts/fits/aic-dump.mjs gemm_perf.parquet > gemm.csv
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import fs from 'fs'

const buf = fs.readFileSync(process.argv[2])
const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
const rows = await parquetReadObjects({ file, compressors })
const cols = Object.keys(rows[0])
console.log(cols.join(','))
for (const r of rows)
  console.log(cols.map(c => (typeof r[c] === 'bigint' ? r[c].toString() : r[c])).join(','))
