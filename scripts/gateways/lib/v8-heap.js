// V8's sampling heap profiler inside a Node.js gateway, read over HTTP by
// `loadgen profile --memory --memory-source node --memory-url http://127.0.0.1:PORT/`.
//
// Loaded with `node --require PATH/v8-heap.js ...`. Does nothing unless GATEBENCH_V8_HEAP_PORT
// is set; then it opens an in-process inspector session, starts HeapProfiler sampling
// (GATEBENCH_V8_SAMPLING_INTERVAL bytes between samples on average, default 32768; objects the
// garbage collector has since freed are kept in the profile, so it counts what was allocated, not
// what is live), and serves on 127.0.0.1:PORT:
//
//   GET / -> {"runtime":"node","version":…,"sampling_interval_bytes":N,
//             "allocated_bytes":F,"allocated_objects":F,"heap_used_bytes":N,
//             "heap_total_bytes":N,"rss_bytes":N,
//             "stacks":{"frame;frame;leaf":{"bytes":F,"objects":F},…}}
//
// The figures are cumulative since sampling started and estimated from the samples: V8 samples
// an allocation of s bytes with probability 1-exp(-s/interval), so each sample stands for
// s/(1-exp(-s/interval)) bytes and 1/(1-exp(-s/interval)) objects. Stacks are root first, without
// the synthetic "(root)" frame; a frame is "functionName file:line" (the url's base name, 1-based
// line; "(anonymous)" for a function without a name; the name alone for a frame without a url).
//
// It never keeps the process alive on its own (the server and its connections are unref'd), and
// a port already in use or a failed session costs one line on stderr, never an exception.
//
// Map: estimate (one sample's weight), frameName / stackNames (the profile's tree as stack
// strings), reading (the JSON body), serve (the HTTP endpoint), start.
'use strict';

const DEFAULT_INTERVAL = 32768;

function estimate(size, interval) {
  const p = 1 - Math.exp(-size / interval);
  if (!(p > 0)) return { bytes: 0, objects: 0 };
  return { bytes: size / p, objects: 1 / p };
}

function frameName(callFrame) {
  const name = (callFrame.functionName || '(anonymous)').replace(/;/g, ',');
  if (!callFrame.url) return name;
  const file = callFrame.url.replace(/[?#].*$/, '').split(/[\\/]/).pop().replace(/;/g, ',');
  return `${name} ${file}:${callFrame.lineNumber + 1}`;
}

// Node id -> "frame;frame;leaf", root first, the synthetic root left out.
function stackNames(head) {
  const names = new Map();
  const pending = [[head, '']];
  while (pending.length > 0) {
    const [node, parent] = pending.pop();
    let stack = parent;
    if (node !== head) {
      const frame = frameName(node.callFrame);
      stack = parent ? `${parent};${frame}` : frame;
    }
    names.set(node.id, stack || '(root)');
    for (const child of node.children || []) pending.push([child, stack]);
  }
  return names;
}

function reading(profile, interval) {
  const v8 = require('v8');
  const names = stackNames(profile.head);
  const stacks = {};
  let bytes = 0;
  let objects = 0;
  for (const sample of profile.samples || []) {
    const weight = estimate(sample.size, interval);
    bytes += weight.bytes;
    objects += weight.objects;
    const name = names.get(sample.nodeId) || '(unknown)';
    const entry = stacks[name] || (stacks[name] = { bytes: 0, objects: 0 });
    entry.bytes += weight.bytes;
    entry.objects += weight.objects;
  }
  const heap = v8.getHeapStatistics();
  return {
    runtime: 'node',
    version: process.version,
    sampling_interval_bytes: interval,
    allocated_bytes: bytes,
    allocated_objects: objects,
    heap_used_bytes: heap.used_heap_size,
    heap_total_bytes: heap.total_heap_size,
    rss_bytes: process.memoryUsage().rss,
    stacks,
  };
}

function serve(session, port, interval) {
  const http = require('http');
  const server = http.createServer((req, res) => {
    const path = (req.url || '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('GET / only\n');
      return;
    }
    session.post('HeapProfiler.getSamplingProfile', (err, result) => {
      if (err) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`HeapProfiler.getSamplingProfile: ${err.message}\n`);
        return;
      }
      const body = JSON.stringify(reading(result.profile, interval));
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  server.on('connection', (socket) => socket.unref());
  server.on('error', (err) => {
    process.stderr.write(`v8-heap: cannot serve on 127.0.0.1:${port}: ${err.message}\n`);
  });
  server.listen(port, '127.0.0.1');
  server.unref();
}

function start() {
  const raw = process.env.GATEBENCH_V8_HEAP_PORT;
  if (!raw) return;
  if (!require('worker_threads').isMainThread) return;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    process.stderr.write(`v8-heap: GATEBENCH_V8_HEAP_PORT must be a port number, not ${raw}\n`);
    return;
  }
  const rawInterval = process.env.GATEBENCH_V8_SAMPLING_INTERVAL;
  const interval = rawInterval ? Number(rawInterval) : DEFAULT_INTERVAL;
  if (!Number.isInteger(interval) || interval < 1) {
    process.stderr.write(`v8-heap: GATEBENCH_V8_SAMPLING_INTERVAL must be a whole number of bytes, not ${rawInterval}\n`);
    return;
  }
  try {
    const { Session } = require('inspector');
    const session = new Session();
    session.connect();
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    }, (err) => {
      if (err) {
        process.stderr.write(`v8-heap: HeapProfiler.startSampling: ${err.message}\n`);
        return;
      }
      serve(session, port, interval);
    });
  } catch (err) {
    process.stderr.write(`v8-heap: no inspector session: ${err.message}\n`);
  }
}

start();
