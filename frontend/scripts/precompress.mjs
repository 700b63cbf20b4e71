// After `vite build`: write a .gz and a .br beside every compressible asset in dist/assets, which
// WhiteNoise serves to browsers that accept them (Content-Encoding); Node's zlib does both, so
// the Python side needs no brotli package. Run by `npm run build`.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const ASSETS = fileURLToPath(new URL("../dist/assets/", import.meta.url));
// Source maps are left as they are: only developer tools fetch them.
const COMPRESSIBLE = /\.(js|mjs|css|svg|json|txt)$/;
// Smaller files gain too little to be worth a second request path.
const MIN_BYTES = 1024;

let before = 0;
let gzipped = 0;
let count = 0;
for (const name of readdirSync(ASSETS)) {
  const path = join(ASSETS, name);
  if (!COMPRESSIBLE.test(name) || !statSync(path).isFile()) continue;
  const body = readFileSync(path);
  if (body.length < MIN_BYTES) continue;
  const gz = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  // WhiteNoise serves the smallest variant the browser accepts: a larger one is left out.
  if (gz.length < body.length) writeFileSync(`${path}.gz`, gz);
  if (br.length < body.length) writeFileSync(`${path}.br`, br);
  before += body.length;
  gzipped += Math.min(gz.length, body.length);
  count += 1;
}
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`precompress: ${count} assets, ${kib(before)} → ${kib(gzipped)} gzip (and brotli)`);
