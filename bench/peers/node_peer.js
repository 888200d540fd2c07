'use strict';
// The node drivers of the side-by-side comparison (bench/peers/README.md):
// node-redlock and redis-semaphore's Mutex, both over ioredis, each with its
// defaults. compare.py runs
//
//   node node_peer.js LIBRARY WORKLOAD HOST PORT KEY SECONDS HOLD_MS ACQUIRERS
//
// with LIBRARY redlock or redis-semaphore and WORKLOAD U, T1, T50 or H, and
// speaks the line protocol described at the top of rdl_peer.c (ready / go /
// result / bye; for H also A, N and stop).
//
//   U    one client, one key, acquire + release in a loop.
//   T1   ACQUIRERS async loops on as many keys, one ioredis client (one
//        connection) shared by all.
//   T50  the same loops, each with an ioredis client of its own.
//   H    one client; acquire, hold HOLD_MS, release; after a release, wait
//        until another process has acquired before trying again.
const path = require('path');
const readline = require('readline');

const Redis = require('ioredis');
const Redlock = require('redlock');
const { Mutex } = require('redis-semaphore');

const LEASE_MS = 10000; // every driver holds with a 10 s lease
const WARMUP_U = 200;
const WARMUP_T = 20;

const [library, workload, host, portText, key, secondsText, holdText, acquirersText] =
  process.argv.slice(2);
if (process.argv.length !== 10) {
  process.stderr.write('usage: node node_peer.js redlock|redis-semaphore U|T1|T50|H ' +
    'HOST PORT KEY SECONDS HOLD_MS ACQUIRERS\n');
  process.exit(2);
}
const port = Number(portText);
const seconds = Number(secondsText);
const holdMs = Number(holdText);
const acquirers = Number(acquirersText);

const nowNs = () => process.hrtime.bigint(); // CLOCK_MONOTONIC, as the other drivers
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const versionOf = (pkg) => require(path.join(pkg, 'package.json')).version;

// ---- the two libraries, behind acquire(key) -> handle and release(handle) --

const libraries = {
  // Defaults of redlock 4: retryCount 10, retryDelay 200 ms, retryJitter
  // 100 ms, driftFactor 0.01. One Redlock per client, as its README does.
  redlock: {
    settings: 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms',
    locker(client) {
      const redlock = new Redlock([client]);
      redlock.on('clientError', (e) => process.stderr.write(`redlock: ${e.message}\n`));
      return {
        acquire: (name) => redlock.lock(name, LEASE_MS),
        release: (lock) => lock.unlock(),
      };
    },
  },
  // Defaults of redis-semaphore 5: retryInterval 10 ms, acquireTimeout 10 s,
  // lockTimeout 10 s, refreshed every 8 s. A Mutex per critical section, as
  // its README does.
  'redis-semaphore': {
    settings: 'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s',
    locker(client) {
      return {
        acquire: async (name) => {
          const mutex = new Mutex(client, name, { lockTimeout: LEASE_MS });
          await mutex.acquire();
          return mutex;
        },
        release: (mutex) => mutex.release(),
      };
    },
  },
};
const lib = libraries[library];
if (!lib || !['U', 'T1', 'T50', 'H'].includes(workload)) {
  process.stderr.write(`node_peer.js: unknown library or workload: ${library} ${workload}\n`);
  process.exit(2);
}

// ---- protocol -------------------------------------------------------------

const say = (line) => process.stdout.write(line + '\n'); // synchronous on a pipe
const lines = readline.createInterface({ input: process.stdin });
const waiting = []; // [word, resolve]
const early = []; // words that came before anyone waited for them
const onWord = {}; // word -> handler (H's N and stop)
lines.on('line', (line) => {
  const [word, arg] = line.trim().split(' ');
  const i = waiting.findIndex(([w]) => w === word);
  if (i >= 0) waiting.splice(i, 1)[0][1](arg);
  else if (onWord[word]) onWord[word](arg);
  else early.push(word);
});
lines.on('close', () => { // compare.py is gone
  for (const [, resolve] of waiting.splice(0)) resolve(null);
  if (onWord.stop) onWord.stop();
});
const expect = (word) => new Promise((resolve) => {
  const i = early.indexOf(word);
  if (i >= 0) resolve(early.splice(i, 1)[0]);
  else waiting.push([word, resolve]);
});

function ready() {
  say('ready ' + JSON.stringify({
    library, version: versionOf(library), form: workload === 'U' || workload === 'H' ? 'sequential' : 'async',
    client: `ioredis ${versionOf('ioredis')}, node ${process.version}`, settings: lib.settings,
    lease_ms: LEASE_MS,
  }));
}

async function connect() {
  const client = new Redis({ host, port });
  await client.ping(); // connected (and ioredis's ready check done)
  return client;
}

// ---- U and T --------------------------------------------------------------

async function cycles(locker, name, until) {
  let n = 0;
  do {
    const handle = await locker.acquire(name);
    await locker.release(handle);
    n++;
  } while (until(n));
  return n;
}

async function runLoops(nclients, nloops, warmup) {
  const clients = [];
  for (let i = 0; i < nclients; i++) clients.push(await connect());
  const lockers = clients.map((c) => lib.locker(c));
  const names = Array.from({ length: nloops }, (_, i) => (nloops === 1 ? key : `${key}:${i}`));
  const locker = (i) => lockers[i % nclients];
  await Promise.all(names.map((name, i) => cycles(locker(i), name, (n) => n < warmup)));
  ready();
  await expect('go');
  const start = nowNs();
  const deadline = start + BigInt(Math.round(seconds * 1e9));
  const counts = await Promise.all(names.map((name, i) => cycles(locker(i), name, () => nowNs() < deadline)));
  const elapsed = nowNs() - start;
  const total = counts.reduce((a, b) => a + b, 0);
  say('result ' + JSON.stringify({ cycles: total, seconds: Number(elapsed) / 1e9, failures: 0 }));
  await expect('bye');
  await Promise.all(clients.map((c) => c.quit()));
}

// ---- H --------------------------------------------------------------------

async function runH() {
  const client = await connect();
  let requests = 0; // every command ioredis sends goes through sendCommand
  const send = client.sendCommand.bind(client);
  client.sendCommand = (...args) => { requests++; return send(...args); };
  const locker = lib.locker(client);
  let other = 0n; // latest acquisition by another process
  let stop = false;
  let wake = null; // resolves the sit-out below
  onWord.N = (t) => { const v = BigInt(t); if (v > other) other = v; if (wake) wake(); };
  onWord.stop = () => { stop = true; if (wake) wake(); };

  await locker.release(await locker.acquire(key)); // warm-up: scripts loaded
  ready();
  await expect('go');
  requests = 0;
  const records = [];
  let failures = 0;
  while (!stop) {
    let handle;
    try {
      handle = await locker.acquire(key);
    } catch (e) { // redlock gives up after its retries
      failures++;
      continue;
    }
    const acquired = nowNs();
    say(`A ${acquired}`);
    await sleep(holdMs);
    const released = nowNs();
    await locker.release(handle);
    const releaseDone = nowNs();
    records.push(`[${acquired},${released},${releaseDone}]`);
    while (other <= acquired && !stop) await new Promise((resolve) => { wake = resolve; });
    wake = null;
  }
  say(`result {"requests":${requests},"failures":${failures},"records":[${records.join(',')}]}`);
  onWord.stop = null;
  await expect('bye');
  await client.quit();
}

(workload === 'H' ? runH()
  : workload === 'U' ? runLoops(1, 1, WARMUP_U)
    : runLoops(workload === 'T1' ? 1 : acquirers, acquirers, WARMUP_T))
  .then(() => process.exit(0), (e) => {
    process.stderr.write(`node_peer.js ${library} ${workload}: ${e.stack || e}\n`);
    process.exit(1);
  });
