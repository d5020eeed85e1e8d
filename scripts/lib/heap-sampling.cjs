/**
 * Preloaded (`--require`) into a server by `npm run bench:next` with BENCH_NEXT_CPU_PROFILE: V8's
 * sampling heap profiler, started and stopped by the bench over HTTP on 127.0.0.1 at
 * BENCH_HEAP_SAMPLING_PORT, counting every object allocated meanwhile, also those already collected
 * (what a workload allocates, not what it keeps). POST /start, then POST /stop answers the profile
 * (`HeapProfiler.SamplingHeapProfile` JSON). Never loaded outside the bench.
 */
'use strict';
const http = require('node:http');
const inspector = require('node:inspector');

const port = Number(process.env.BENCH_HEAP_SAMPLING_PORT);
if (Number.isInteger(port) && port > 0) {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
    );
  const server = http.createServer((req, res) => {
    const answer = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    req.resume();
    const step =
      req.method === 'POST' && req.url === '/start'
        ? post('HeapProfiler.enable').then(() =>
            post('HeapProfiler.startSampling', {
              samplingInterval: 4096,
              includeObjectsCollectedByMajorGC: true,
              includeObjectsCollectedByMinorGC: true,
            }),
          )
        : req.method === 'POST' && req.url === '/stop'
          ? post('HeapProfiler.stopSampling').then((r) => r.profile)
          : Promise.reject(new Error(`no such request: ${req.method} ${req.url}`));
    step.then(
      (profile) => answer(200, profile ?? {}),
      (err) => answer(400, { error: err.message }),
    );
  });
  server.listen(port, '127.0.0.1');
  // The bench's channel never keeps the server from exiting.
  server.unref();
}
