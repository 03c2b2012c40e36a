/* Run a step where the page shows it: the Run, Edit and Reset buttons of each listing.

   docs/hooks/run_in_page.py marks one listing of each step a page shows
   (<div class="run-listing" data-run="MODULE">, with data-part="26:47" or
   data-part="SECTION" when it shows only part of the step) and puts the
   buttons and an output box in it.  Run runs the whole step; Edit opens the
   whole step file in place of the listing (for a part, the file comes from
   pyodide/manifest.json), and Reset brings the listing back.  A ">>>"
   session of the generators chapter (class "run-session",
   data-run="docs/generators.md:3") has Run only: it runs the sessions
   above it, then its own, as the tests' doctest does.  This script wires
   them up.  All the Python runs in one Web Worker per page
   (run-worker.js): the first Run boots it, with a
   progress bar and the time it took; later runs start at once.  What the
   step prints is streamed into the output box, then compared with what
   `python -m shared.page MODULE` printed in a terminal when the site was
   built (pyodide/manifest.json).  A run of stage 2's own loop keeps a
   journal, which opens in the replay player (replay.js).  The container
   has the class "running" while its step runs. */
(function () {
  "use strict";

  const WORDS = {
    en: {
      run: "Run", stop: "Stop", edit: "Edit", reset: "Reset",
      loading: (mb, total, s) => `Loading Python: ${mb} of ${total} MB, ${s} s`,
      starting: s => `Starting Python, ${s} s`,
      started: (python, pyodide, s) => `Python ${python} (Pyodide ${pyodide}) started in ${s} s.`,
      ran: (s, v) => `Ran in ${s} s of real time; ${v} s passed on the world's virtual clock.`,
      status: n => `The program ended with exit status ${n}.`,
      same: m => `The very lines that python -m shared.page ${m} printed in a terminal when ` +
        "this site was built.",
      differs: (m, python) => `These lines differ from those that python -m shared.page ${m} ` +
        `printed in a terminal (Python ${python}) when this site was built; the terminal's ` +
        "lines that differ are marked below.",
      edited: "You changed the step: this is your version's output.",
      stopped: "Stopped. The next run starts Python again.",
      failed: "Python could not start in this page: ",
      noFile: "The step's file could not be loaded: ",
      replay: "Open this run in the replay player",
      noJournal: "This step runs on stage 1's loop, which keeps no journal: the replay player " +
        "steps through runs of stage 2's own loop (the taskgroup and timeout steps).",
      editLabel: m => `The source of ${m}, to edit`,
      sessionSame: "Each input printed what the page shows, as the tests' doctest compares them.",
      sessionDiffers: "Some inputs printed other than the page shows, as the tests' doctest " +
        "compares them.",
      sessionRan: s => `Ran in ${s} s, after the sessions above it.`,
    },
    zh: {
      run: "运行", stop: "停止", edit: "编辑", reset: "还原",
      loading: (mb, total, s) => `正在载入 Python：${mb} / ${total} MB，${s} 秒`,
      starting: s => `正在启动 Python，${s} 秒`,
      started: (python, pyodide, s) => `Python ${python}（Pyodide ${pyodide}）启动用了 ${s} 秒。`,
      ran: (s, v) => `实际用时 ${s} 秒；模拟世界的虚拟时钟走了 ${v} 秒。`,
      status: n => `程序以退出状态 ${n} 结束。`,
      same: m => `和构建本站时在终端里运行 python -m shared.page ${m} 打印的行完全相同。`,
      differs: (m, python) => `这些行和构建本站时在终端（Python ${python}）里运行 ` +
        `python -m shared.page ${m} 打印的不同；下面标出了终端里不同的那些行。`,
      edited: "你改过这一步：这是你改的版本的输出。",
      stopped: "已停止。下次运行会重新启动 Python。",
      failed: "Python 没能在这个页面里启动：",
      noFile: "没能载入这一步的文件：",
      replay: "在回放播放器里打开这次运行",
      noJournal: "这一步跑在第一阶段的事件循环上，那个循环不记日志；回放播放器只能逐步回放第二阶段" +
        "自己的事件循环（taskgroup 和 timeout 这两步）。",
      editLabel: m => `${m} 的源代码，可以编辑`,
      sessionSame: "按测试里 doctest 的比较方法，每个输入打印的都和页面上写的一样。",
      sessionDiffers: "按测试里 doctest 的比较方法，有的输入打印的和页面上写的不一样。",
      sessionRan: s => `先运行了上面的会话，再运行这一个，用时 ${s} 秒。`,
    },
  };

  const script = document.currentScript;
  const root = new URL(script.dataset.root || "./", document.baseURI);
  const lang = (document.documentElement.lang || "en").startsWith("zh") ? "zh" : "en";
  const w = WORDS[lang];
  const seconds = s => s.toFixed(s < 10 ? 2 : 1);

  /* --- The worker: one per page, booted by the first Run ---------------- */

  let worker = null;
  let ready = null; // A promise of {python, pyodide, seconds}.
  let manifest = null;
  let nextId = 1;
  const waiting = new Map(); // Message id -> handlers.
  let bootView = null; // The status line that shows the boot's progress.

  function getManifest() {
    if (!manifest) {
      manifest = fetch(new URL("pyodide/manifest.json", root)).then(response => {
        if (!response.ok) throw new Error(`${response.status} ${response.url}`);
        return response.json();
      });
    }
    return manifest;
  }

  function startWorker() {
    if (ready) return ready;
    ready = getManifest().then(data => new Promise((resolve, reject) => {
      const total = Object.entries(data.sizes)
        .filter(([name]) => name !== "pyodide.asm.mjs" && name !== "pyodide.mjs"
          && (!name.startsWith("wheels/") || data.wheels.includes(name)))
        .reduce((sum, [, size]) => sum + size, 0);
      const started = performance.now();
      let loaded = 0;
      let phase = "download";
      const show = () => {
        if (!bootView) return;
        const s = seconds((performance.now() - started) / 1000);
        const bar = bootView.querySelector("progress") || document.createElement("progress");
        bar.max = total;
        bar.value = Math.min(loaded, total);
        const text = phase === "download"
          ? w.loading((loaded / 1e6).toFixed(1), (total / 1e6).toFixed(1), s)
          : w.starting(s);
        bootView.textContent = text + " ";
        bootView.append(bar);
      };
      const ticking = setInterval(show, 100);
      worker = new Worker(new URL("javascripts/run-worker.js", root), { type: "module" });
      worker.onmessage = event => {
        const message = event.data;
        if (message.type === "progress") { loaded = message.loaded; show(); }
        else if (message.type === "phase") { phase = message.phase; show(); }
        else if (message.type === "ready") { clearInterval(ticking); resolve(message); }
        else if (message.type === "log") console.log(message.text);
        else if (message.type === "error" && message.id === undefined) {
          clearInterval(ticking);
          reject(new Error(message.text));
        } else {
          const handlers = waiting.get(message.id);
          if (handlers) handlers(message);
        }
      };
      worker.onerror = event => { clearInterval(ticking); reject(new Error(event.message)); };
      worker.postMessage({ type: "boot", manifest: data });
    }));
    ready.catch(() => { ready = null; });
    return ready;
  }

  function stopWorker() {
    if (worker) worker.terminate();
    worker = null;
    ready = null;
    for (const handlers of waiting.values()) handlers({ type: "stopped" });
    waiting.clear();
  }

  function ask(message, handlers) {
    const id = nextId++;
    waiting.set(id, handlers);
    worker.postMessage({ ...message, id });
    return id;
  }

  /* For the tests of the page's Python: run code in the worker, get what it printed. */
  window.crawlerPython = {
    version: () => startWorker(),
    run: (code, wheels) => startWorker().then(() => new Promise(resolve => {
      const id = ask({ type: "python", code, wheels: wheels || [] }, message => {
        waiting.delete(id);
        resolve(message);
      });
    })),
  };

  /* The replay player's script and style sheet, loaded when a run is first opened in it. */
  let player = null;
  function loadPlayer() {
    if (window.replayJournal) return Promise.resolve();
    if (!player) {
      const style = document.createElement("link");
      style.rel = "stylesheet";
      style.href = new URL("stylesheets/replay.css", root).href;
      document.head.append(style);
      player = new Promise((resolve, reject) => {
        const code = document.createElement("script");
        code.src = new URL("javascripts/replay.js", root).href;
        code.onload = resolve;
        code.onerror = reject;
        document.body.append(code);
      });
    }
    return player;
  }

  /* --- One listing ------------------------------------------------------- */

  function differences(got, expected) {
    const a = got.split("\n");
    const b = expected.split("\n");
    const marked = document.createElement("pre");
    marked.className = "run-expected";
    b.forEach((line, n) => {
      const row = document.createElement("span");
      row.textContent = line + "\n";
      if (a[n] !== line) row.className = "run-differs";
      marked.append(row);
    });
    return marked;
  }

  class Listing {
    constructor(box) {
      this.box = box;
      this.module = box.dataset.run;
      this.pre = box.querySelector(".highlight pre");
      this.code = this.pre.querySelector("code");
      this.part = box.dataset.part || null;
      this.original = null; // The whole step's text, once Edit has opened it.
      this.button = box.querySelector(".run-button");
      this.editButton = box.querySelector(".run-edit");
      this.resetButton = box.querySelector(".run-reset");
      this.status = box.querySelector(".run-status");
      this.output = box.querySelector(".run-output");
      this.editor = null;
      this.running = null;
      this.session = box.classList.contains("run-session"); // A >>> session: Run only.
      this.button.disabled = false;
      this.button.addEventListener("click", () => (this.running ? this.stop() : this.run()));
      if (this.editButton) {
        this.editButton.disabled = false;
        this.editButton.addEventListener("click", () => this.edit());
        this.resetButton.addEventListener("click", () => this.reset());
      }
    }

    source() {
      return this.editor ? this.editor.value : null;
    }

    edited() {
      return Boolean(this.editor) && this.editor.value !== this.original;
    }

    /* The whole step file: the listing's own text, or, for a part, the manifest's copy. */
    wholeFile() {
      if (!this.part) return Promise.resolve(this.code.textContent.replace(/\n$/, ""));
      return getManifest().then(data => data.sources[this.module]);
    }

    edit() {
      if (this.editor) { this.editor.focus(); return; }
      this.editButton.disabled = true;
      this.wholeFile().then(text => {
        this.original = text;
        const editor = document.createElement("textarea");
        editor.className = "run-editor";
        editor.spellcheck = false;
        editor.value = text;
        editor.rows = Math.min(40, text.split("\n").length + 1);
        editor.setAttribute("aria-label", w.editLabel(this.module));
        editor.addEventListener("keydown", event => {
          if (event.key === "Tab" && !event.shiftKey && !event.altKey && !event.ctrlKey) {
            event.preventDefault();
            editor.setRangeText("    ", editor.selectionStart, editor.selectionEnd, "end");
          }
        });
        this.pre.hidden = true;
        this.pre.after(editor);
        this.editor = editor;
        this.editButton.hidden = true;
        this.resetButton.hidden = false;
        this.showShownPart(editor, text);
      }).catch(error => {
        this.status.textContent = w.noFile + error.message;
      }).finally(() => { this.editButton.disabled = false; });
    }

    /* Put the caret where the listing the page showed begins, and scroll there. */
    showShownPart(editor, text) {
      const first = this.code.textContent.split("\n").find(line => line.trim()) || "";
      const at = Math.max(0, text.indexOf(first.trim()));
      const line = text.slice(0, at).split("\n").length - 1;
      editor.focus({ preventScroll: true });
      editor.setSelectionRange(at, at);
      editor.scrollTop = line * parseFloat(getComputedStyle(editor).lineHeight);
      editor.scrollIntoView({ block: "nearest" });
    }

    reset() {
      if (this.running) this.stop();
      if (this.editor) this.editor.remove();
      this.editor = null;
      this.pre.hidden = false;
      this.editButton.hidden = false;
      this.resetButton.hidden = true;
      this.output.hidden = true;
      this.output.textContent = "";
      this.status.textContent = "";
    }

    run() {
      const source = this.source();
      const edited = this.edited();
      this.box.classList.add("running");
      this.button.textContent = w.stop;
      this.output.hidden = false;
      this.output.textContent = "";
      const shown = document.createElement("pre");
      shown.className = "run-text";
      this.output.append(shown);
      const booted = Boolean(ready);
      bootView = this.status;
      this.running = startWorker()
        .then(info => {
          if (!booted) this.status.textContent = w.started(info.python, info.pyodide, seconds(info.seconds));
          else this.status.textContent = "";
          bootView = null;
          return new Promise(resolve => {
            const id = ask(
              { type: "run", module: this.module, source: edited ? source : null,
                journal: this.module.startsWith("stage2_generators.") },
              message => {
                if (message.type === "out") shown.append(message.text);
                else { waiting.delete(id); resolve([message, info]); }
              });
          });
        })
        .then(([message, info]) => this.finish(message, info, shown.textContent, edited))
        .catch(error => {
          this.status.textContent = w.failed + error.message;
          this.done();
        });
    }

    finish(message, info, text, edited) {
      if (message.type === "stopped") {
        this.status.textContent = w.stopped;
        this.done();
        return;
      }
      if (message.type === "error") {
        this.status.textContent = w.failed + message.text;
        this.done();
        return;
      }
      const verdict = message.status === 0 ? w.sessionSame : w.sessionDiffers;
      const lines = this.session
        ? [verdict, w.sessionRan(seconds(message.seconds))]
        : [w.ran(seconds(message.seconds), message.virtual.toFixed(3))];
      if (message.status !== 0 && !this.session) lines.unshift(w.status(message.status));
      const about = document.createElement("p");
      about.className = "run-about";
      about.textContent = lines.join(" ");
      this.output.append(about);
      getManifest().then(data => {
        const expected = data.outputs[this.module];
        const verdict = document.createElement("p");
        verdict.className = "run-verdict";
        if (edited) {
          verdict.textContent = w.edited;
          this.box.dataset.verdict = "edited";
        } else if (text === expected) {
          verdict.textContent = w.same(this.module);
          this.box.dataset.verdict = "same";
        } else {
          verdict.textContent = w.differs(this.module, data.built_with);
          this.box.dataset.verdict = "differs";
        }
        this.output.append(verdict);
        if (!edited && text !== expected) this.output.append(differences(text, expected));
        this.offerReplay(message.journal);
        this.done();
      });
    }

    offerReplay(journal) {
      if (!this.module.startsWith("stage2_generators.")) return;
      if (!journal) {
        const note = document.createElement("p");
        note.className = "run-about run-no-journal";
        note.textContent = w.noJournal;
        this.output.append(note);
        return;
      }
      const open = document.createElement("button");
      open.type = "button";
      open.className = "md-button run-replay";
      open.textContent = w.replay;
      open.addEventListener("click", () => {
        open.disabled = true;
        loadPlayer().then(() => {
          open.remove();
          const player = document.createElement("div");
          player.className = "replay";
          player.setAttribute("lang", lang);
          this.output.append(player);
          window.replayJournal(player, journal);
          player.focus({ preventScroll: true });
        });
      });
      this.output.append(open);
    }

    stop() {
      stopWorker();
    }

    done() {
      this.running = null;
      this.box.classList.remove("running");
      this.button.textContent = w.run;
    }
  }

  function startAll() {
    document.querySelectorAll(".run-listing[data-run]").forEach(box => {
      if (!box.listing) box.listing = new Listing(box);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
  else startAll();
})();
