/* The Web Worker that runs the steps: Python (Pyodide) off the page's thread.

   Started by run.js as a module worker.  The first message boots Python
   from the site's own files (../pyodide/), counting the bytes that arrive
   so that the page can show its progress; then it unpacks the project's
   modules and the wheels the shared package needs.  Each "run" message
   runs a step with shared.page.run.run_step, in a fresh simulated world,
   and streams what the step prints back to the page.  The page stays
   responsive: nothing here runs on its thread.  Nothing is fetched from
   anywhere but this site. */
import { loadPyodide } from "../pyodide/pyodide.mjs";

const HOME = "/home/pyodide/project"; // The project's root: paths in tracebacks are relative to it.
const FLUSH_MS = 40; // How often printed text goes to the page while a step runs.
const base = new URL("../pyodide/", import.meta.url);
let pyodide = null;
let loaded = 0;

/* fetch, counting the bytes of each answer as they arrive. */
const plainFetch = self.fetch.bind(self);
let lastProgress = 0;
function progress(force) {
  const now = Date.now();
  if (force || now - lastProgress > 100) {
    lastProgress = now;
    self.postMessage({ type: "progress", loaded });
  }
}
self.fetch = async (resource, options) => {
  const response = await plainFetch(resource, options);
  if (!response.body) return response;
  const counting = new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      progress(false);
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(counting), {
    status: response.status, statusText: response.statusText, headers: response.headers,
  });
};

async function bytes(path) {
  const response = await self.fetch(new URL(path, base));
  if (!response.ok) throw new Error(`${response.status} ${response.url}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function boot(manifest) {
  const started = performance.now();
  self.postMessage({ type: "phase", phase: "download" });
  pyodide = await loadPyodide({
    indexURL: base.href,
    // The order of a set of strings follows their hashes: fixed, as in the terminal's run.
    env: { PYTHONHASHSEED: "0", HOME: "/home/pyodide" },
    stdout: text => self.postMessage({ type: "log", text }),
    stderr: text => self.postMessage({ type: "log", text }),
  });
  const site = pyodide.runPython("import site; site.getsitepackages()[0]");
  const archives = await Promise.all([
    bytes("project.zip"), ...manifest.wheels.map(path => bytes(path)),
  ]);
  progress(true);
  self.postMessage({ type: "phase", phase: "start" });
  pyodide.FS.mkdirTree(HOME);
  pyodide.unpackArchive(archives[0], "zip", { extractDir: HOME });
  archives.slice(1).forEach(wheel => pyodide.unpackArchive(wheel, "zip", { extractDir: site }));
  // Each run imports the project's modules afresh (shared/page/run.py): with their
  // bytecode kept in the worker's memory, only the first run compiles them.
  pyodide.runPython(`
import os, sys
sys.dont_write_bytecode = False
sys.path.insert(0, ${JSON.stringify(HOME)})
os.chdir(${JSON.stringify(HOME)})
from shared.page.run import page_run
`);
  const python = pyodide.runPython("import sys; sys.version.split()[0]");
  self.postMessage({
    type: "ready", python, pyodide: pyodide.version,
    seconds: (performance.now() - started) / 1000,
  });
}

function run(message) {
  const started = performance.now();
  let pending = "";
  let last = Date.now();
  const flush = () => {
    if (pending) self.postMessage({ type: "out", id: message.id, text: pending });
    pending = "";
    last = Date.now();
  };
  const write = text => {
    pending += text;
    if (Date.now() - last > FLUSH_MS) flush();
  };
  const pageRun = pyodide.globals.get("page_run");
  let outcome;
  try {
    outcome = pageRun(message.module, message.source ?? null, write, Boolean(message.journal));
  } finally {
    pageRun.destroy();
  }
  flush();
  const [status, seconds, journal] = outcome.toJs();
  outcome.destroy();
  self.postMessage({
    type: "done", id: message.id, status, virtual: seconds,
    journal: journal ? JSON.parse(journal) : null,
    seconds: (performance.now() - started) / 1000,
  });
}

async function python(message) {
  // For the tests of the page's backends: run code, return what it printed.
  const site = pyodide.runPython("import site; site.getsitepackages()[0]");
  for (const path of message.wheels || []) {
    pyodide.unpackArchive(await bytes(path), "zip", { extractDir: site });
  }
  let text = "";
  pyodide.setStdout({ batched: line => { text += line + "\n"; } });
  pyodide.setStderr({ batched: line => { text += line + "\n"; } });
  let error = null;
  try {
    pyodide.runPython(message.code);
  } catch (caught) {
    error = String(caught);
  }
  pyodide.setStdout({ batched: line => self.postMessage({ type: "log", text: line }) });
  pyodide.setStderr({ batched: line => self.postMessage({ type: "log", text: line }) });
  self.postMessage({ type: "python", id: message.id, text, error });
}

let booting = null;
self.onmessage = async event => {
  const message = event.data;
  try {
    if (message.type === "boot") {
      booting = booting || boot(message.manifest);
      await booting;
    } else if (message.type === "run") {
      await booting;
      run(message);
    } else if (message.type === "python") {
      await booting;
      await python(message);
    }
  } catch (error) {
    self.postMessage({ type: "error", id: message.id, text: String(error && error.stack || error) });
  }
};
