/* The replay player: steps through a journal of stage 2's event loop.

   A journal (shared/record/journal.py) holds one step per select() and
   per callback the loop ran, each with a copy of the loop's state.  Each
   element <div class="replay" data-journal="URL"> becomes a player: the
   source with the line each task is at, the tasks, the ready queue, the
   timers, the selector's sockets and the crawl's queue, a caption per
   step in the page's language, and buttons and keys to move.  A journal
   may also sit in the page, in <script type="application/json"
   class="replay-data">, as in the file python -m shared.record.journal
   writes.  No library, no request but the journal's own. */
(function () {
  "use strict";

  const WORDS = {
    en: {
      start: "Start", back: "Back", forward: "Forward", play: "Play", pause: "Pause",
      nextTurn: "Next turn", nextStep: "Next step of", step: "Step", of: "of",
      turn: "turn", tasks: "Tasks", ready: "Ready queue", timers: "Timers",
      sockets: "Selector's sockets", queue: "Crawl queue", frames: "Frames of",
      none: "empty", file: "File", keys: "Keys: ← → step, space play, n next turn, " +
        "t next step of the chosen task, Home/End.",
      states: { new: "new", ready: "ready", waiting: "waiting", done: "done",
        failed: "failed", cancelled: "cancelled" },
      loading: "Loading the journal…", failed: "The journal could not be loaded.",
      empty: "The journal holds no step: the loop never turned.",
      truncated: "The journal stops here: it keeps a limited number of steps.",
      simulated: "Socket numbers are the simulated network's: they start at 1000000, " +
        "far above any real file descriptor, so the two are never mixed up.",
    },
    zh: {
      start: "开头", back: "后退", forward: "前进", play: "播放", pause: "暂停",
      nextTurn: "下一轮", nextStep: "下一步：", step: "第", of: "步，共",
      turn: "轮", tasks: "任务", ready: "就绪队列", timers: "定时器",
      sockets: "选择器里的套接字", queue: "爬取队列", frames: "帧：",
      none: "空", file: "文件", keys: "按键：← → 单步，空格播放，n 下一轮，" +
        "t 所选任务的下一步，Home/End 到头尾。",
      states: { new: "新建", ready: "就绪", waiting: "等待", done: "完成",
        failed: "失败", cancelled: "已取消" },
      loading: "正在载入日志……", failed: "日志载入失败。",
      empty: "日志里一步也没有：事件循环一轮都没转。",
      truncated: "日志到此为止：它只保存有限的步数。",
      simulated: "套接字的编号是模拟网络给的：从 1000000 起，远远高于真实的文件描述符，两者不会混淆。",
    },
  };
  const PLAY_MS = 900; // Between two steps while playing.

  function language(element) {
    const lang = element.closest("[lang]")?.getAttribute("lang") || "en";
    return lang.startsWith("zh") ? "zh" : "en";
  }

  function make(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /* --- Captions: one sentence for each step, in English or Chinese --------- */

  function shortFile(path) {
    return path.split("/").pop();
  }

  function shortUrl(url) {
    return url.replace(/^[a-z]+:\/\/[^/]+/, "") || "/";
  }

  class Captions {
    constructor(journal, lang) {
      this.journal = journal;
      this.zh = lang === "zh";
    }

    task(number) {
      return this.journal.tasks[number];
    }

    /* Where a task is: its deepest frame in the crawler (or its deepest). */
    where(frames) {
      if (!frames || !frames.length) return "";
      const all = frames.map(number => this.journal.frames[number]);
      const own = all.filter(([path]) => path.endsWith("crawler.py"));
      const [path, line, fn] = (own.length ? own : all)[(own.length ? own : all).length - 1];
      return `${fn.split(".").pop()} (${shortFile(path)}:${line})`;
    }

    /* The function that made a task wait on a plain future: Queue.get, say. */
    waitedIn(frames) {
      const names = (frames || []).map(number => this.journal.frames[number][2]);
      return names.reverse().find(fn => !/__await__|__iter__|_wait_in_line/.test(fn)) || "";
    }

    wait(waits, frames) {
      const zh = this.zh;
      const inside = this.waitedIn(frames);
      if (inside === "Queue.get") return zh ? "队列里来一个 URL" : "a URL in the queue";
      if (inside === "Queue.join") return zh ? "队列里的 URL 全部处理完" : "every queued URL to be done";
      if (!waits) return zh ? "一个 future" : "a future";
      if (waits.kind === "socket") {
        const how = waits.event === "write" ? (zh ? "可写" : "writable") : (zh ? "可读" : "readable");
        return zh ? `套接字 ${waits.fd} ${how}` : `socket ${waits.fd} to be ${how}`;
      }
      if (waits.kind === "timer") return zh ? "一个定时器到期" : "a timer";
      if (waits.kind === "task") return zh ? `任务 ${this.task(waits.task)} 结束` : `task ${this.task(waits.task)} to end`;
      const where = inside ? (zh ? `（在 ${inside} 里）` : ` (in ${inside})`) : "";
      return zh ? `一个 future 完成${where}` : `a future to be done${where}`;
    }

    select(step) {
      const zh = this.zh;
      const events = step.events.map(([fd, what]) => zh
        ? `套接字 ${fd} ${what === "write" ? "可写" : "可读"}`
        : `socket ${fd} ${what === "write" ? "writable" : "readable"}`);
      const n = step.state.ready.length;
      if (zh) {
        const got = events.length ? `报告${events.join("、")}` : "没有报告任何套接字就绪";
        const due = step.timers_due ? `，有 ${step.timers_due} 个定时器到期` : "";
        return `第 ${step.turn} 轮（${step.t.toFixed(1)} 毫秒）：select() ${got}${due}；就绪队列里现在有 ${n} 个回调。`;
      }
      const got = events.length ? events.join(" and ") : "nothing";
      const due = step.timers_due ? `, ${step.timers_due} timer${step.timers_due > 1 ? "s are" : " is"} due` : "";
      return `Turn ${step.turn} (${step.t.toFixed(1)} ms): select() returned ${got}${due}, ` +
        `and ${n} callback${n === 1 ? "" : "s"} wait${n === 1 ? "s" : ""} in the ready queue.`;
    }

    taskStep(step, index) {
      const zh = this.zh;
      const name = this.task(step.task);
      const after = step.state.tasks[step.task];
      const before = index > 0 ? this.journal.steps[index - 1].state.tasks[step.task] : null;
      const first = !before || before.state === "new";
      if (step.cancelled) return this.cancelled(step, name, after);
      let why;
      if (first) why = zh ? `${name} 第一次运行` : `${name} starts`;
      else if (step.waited) why = zh
        ? `${name} 在 ${this.where(step.resumed)} 恢复，因为${this.arrived(step.waited, step.resumed)}`
        : `${name} resumes in ${this.where(step.resumed)} now that ${this.waited(step.waited, step.resumed)}`;
      else why = zh
        ? `${name} 轮到自己，在 ${this.where(step.resumed)} 恢复`
        : `${name} resumes in ${this.where(step.resumed)} on its turn`;
      let then;
      const endings = {
        done: ["然后运行结束", "and runs to its end"],
        failed: ["然后因异常结束", "and ends with an exception"],
        cancelled: ["然后以取消告终", "and ends, cancelled"],
      };
      if (endings[after.state]) {
        then = endings[after.state][zh ? 0 : 1];
      } else if (after.state === "ready") {
        then = zh ? `然后在 ${this.where(after.frames)} 让出一轮，回到就绪队列` :
          `runs, and yields at ${this.where(after.frames)} to give the others a turn`;
      } else {
        then = zh ? `然后在 ${this.where(after.frames)} 挂起，等${this.wait(after.waits, after.frames)}` :
          `runs, and suspends in ${this.where(after.frames)}, waiting for ${this.wait(after.waits, after.frames)}`;
      }
      return zh ? `${why}，${then}。` : `${why}, ${then}.`;
    }

    /* A task woken by cancel(): what it waited for never came. */
    cancelled(step, name, after) {
      const zh = this.zh;
      const where = this.where(step.resumed);
      const what = step.waited ? this.wait(step.waited, step.resumed) : (zh ? "一个 future" : "a future");
      const ended = ["cancelled", "done", "failed"].includes(after.state);
      if (zh) {
        return `${name} 被取消了：它本来在 ${where} 等${what}，没等到；CancelledError 在那里抛出，` +
          (ended ? "它就此以取消告终。" : `它接住了这个错误，然后在 ${this.where(after.frames)} 接着等。`);
      }
      return `${name} is cancelled: it waited in ${where} for ${what}, which never came; ` +
        "CancelledError is raised there, " +
        (ended ? "and the task ends, cancelled." : `it catches it, and waits again in ${this.where(after.frames)}.`);
    }

    waited(waits, frames) {
      const inside = this.waitedIn(frames);
      if (inside === "Queue.get") return "a URL is in the queue";
      if (inside === "Queue.join") return "every queued URL is done";
      if (waits.kind === "socket") return `socket ${waits.fd} is ${waits.event === "write" ? "writable" : "readable"}`;
      if (waits.kind === "timer") return "its timer went off";
      if (waits.kind === "task") return `task ${this.task(waits.task)} has ended`;
      return `the future it waited on${inside ? " in " + inside : ""} is done`;
    }

    arrived(waits, frames) {
      const inside = this.waitedIn(frames);
      if (inside === "Queue.get") return "队列里来了 URL";
      if (inside === "Queue.join") return "队列里的 URL 都处理完了";
      if (waits.kind === "socket") return `套接字 ${waits.fd} ${waits.event === "write" ? "可写" : "可读"}了`;
      if (waits.kind === "timer") return "它的定时器到期了";
      if (waits.kind === "task") return `任务 ${this.task(waits.task)} 结束了`;
      return `它${inside ? "在 " + inside + " 里" : ""}等的 future 完成了`;
    }

    other(step) {
      const zh = this.zh;
      const cb = step.callback;
      const woken = cb.wakes !== undefined ? this.task(cb.wakes) : null;
      if (cb.fn === "_wake") {
        return zh
          ? `套接字 ${cb.fd} 就绪：_wake 注销它，并把 ${woken || "等它的任务"} 所等的 future 设为完成，这会把 ${woken || "该任务"} 的 _wakeup 放进就绪队列。`
          : `Socket ${cb.fd} is ready: _wake unregisters it and marks done the future ` +
            `${woken || "a task"} waits on, which puts ${woken ? woken + "'s" : "its"} _wakeup in the ready queue.`;
      }
      if (cb.fn === "_set_result_unless_done") {
        return zh
          ? `定时器到期：${woken || "一个任务"} 的 sleep 结束了，它的 _wakeup 进入就绪队列。`
          : `A timer is due: the sleep of ${woken || "a task"} is over, so its _wakeup joins the ready queue.`;
      }
      if (cb.fn.endsWith("copy_outcome")) {
        return zh
          ? "被 shield() 护住的任务结束了：copy_outcome 把它的结果交给外层的 future，等着这个 future 的任务就会被唤醒。"
          : "The task inside shield() has ended: copy_outcome hands its result to the outer " +
            "future, and the task waiting on that future is woken.";
      }
      if (cb.fn.endsWith("forget_inner")) {
        return zh
          ? "shield() 外层的 future 完成了：forget_inner 不再替里面的任务转交结果。"
          : "shield()'s outer future is done: forget_inner stops passing on the inner task's outcome.";
      }
      if (cb.fn.endsWith("_on_task_done")) {
        return zh
          ? "一个工作任务结束了：TaskGroup 的 _on_task_done 把它从组里划掉。"
          : "A worker has ended: the TaskGroup's _on_task_done crosses it off the group.";
      }
      if (cb.fn === "_run_until_complete_cb") {
        return zh ? "主任务已经完成：run_until_complete 的回调让事件循环停下。"
          : "The main task is done: run_until_complete's callback stops the loop.";
      }
      return zh ? `事件循环运行回调 ${cb.fn}。` : `The loop runs the callback ${cb.fn}.`;
    }

    of(step, index) {
      if (step.kind === "select") return this.select(step);
      if (step.task !== undefined) return this.taskStep(step, index);
      return this.other(step);
    }
  }

  /* Each step of a journal holds what changed since the step before (the
     lists that did, the tasks that did, by number): give each its whole state. */
  function expand(journal) {
    let state = { ready: [], timers: [], sockets: [], queue: [], tasks: [] };
    for (const step of journal.steps) {
      const changed = step.state;
      const tasks = state.tasks.slice();
      for (const [number, task] of Object.entries(changed.tasks || {})) tasks[Number(number)] = task;
      state = { ...state, ...changed, tasks };
      step.state = state;
    }
    return journal;
  }

  /* --- The player -------------------------------------------------------- */

  class Player {
    constructor(root, journal) {
      this.root = root;
      this.journal = journal;
      this.lang = language(root);
      this.words = WORDS[this.lang];
      this.captions = new Captions(journal, this.lang);
      this.index = 0;
      this.timer = null;
      this.chosen = journal.tasks.findIndex(name => name.startsWith("worker"));
      if (this.chosen < 0) this.chosen = 0;
      this.file = this.defaultFile();
      this.build();
      this.show();
    }

    defaultFile() {
      const files = Object.keys(this.journal.files);
      return files.find(path => path.endsWith("crawler.py")) || files[0] || "";
    }

    button(label, action, key) {
      const button = make("button", "replay-button", label);
      button.type = "button";
      button.title = key ? `${label} (${key})` : label;
      button.addEventListener("click", () => { action(); });
      return button;
    }

    build() {
      const w = this.words;
      const root = this.root;
      root.textContent = "";
      root.tabIndex = 0;
      root.setAttribute("role", "group");
      root.setAttribute("aria-roledescription", "replay");
      const controls = make("div", "replay-controls");
      this.buttons = {
        start: this.button("|◀", () => this.go(0), "Home"),
        back: this.button("◀", () => this.go(this.index - 1), "←"),
        play: this.button("▶▶", () => this.toggle(), w.play),
        forward: this.button("▶", () => this.go(this.index + 1), "→"),
        turn: this.button(w.nextTurn, () => this.nextTurn(), "n"),
      };
      this.buttons.start.setAttribute("aria-label", w.start);
      this.buttons.back.setAttribute("aria-label", w.back);
      this.buttons.forward.setAttribute("aria-label", w.forward);
      this.buttons.play.setAttribute("aria-label", w.play);
      Object.values(this.buttons).forEach(button => controls.append(button));
      this.taskSelect = make("select", "replay-task-select");
      this.taskSelect.setAttribute("aria-label", w.nextStep);
      this.journal.tasks.forEach((name, number) => {
        const option = make("option", "", name);
        option.value = String(number);
        this.taskSelect.append(option);
      });
      this.taskSelect.value = String(this.chosen);
      this.taskSelect.addEventListener("change", () => {
        this.chosen = Number(this.taskSelect.value);
        this.show();
      });
      const stepOf = this.button(w.nextStep, () => this.nextStepOf(this.chosen), "t");
      stepOf.classList.add("replay-step-of");
      controls.append(stepOf, this.taskSelect);
      this.position = make("span", "replay-position");
      controls.append(this.position);
      this.caption = make("p", "replay-caption");
      this.caption.setAttribute("aria-live", "polite");
      const body = make("div", "replay-body");
      const source = make("div", "replay-source");
      const head = make("div", "replay-file");
      this.fileSelect = make("select", "replay-file-select");
      this.fileSelect.setAttribute("aria-label", w.file);
      Object.keys(this.journal.files).forEach(path => {
        const option = make("option", "", path);
        option.value = path;
        this.fileSelect.append(option);
      });
      this.fileSelect.value = this.file;
      this.fileSelect.addEventListener("change", () => {
        this.file = this.fileSelect.value;
        this.drawSource();
        this.show();
      });
      head.append(this.fileSelect);
      this.code = make("pre", "replay-code");
      source.append(head, this.code);
      const panels = make("div", "replay-panels");
      this.panels = {};
      for (const name of ["tasks", "ready", "timers", "sockets", "queue", "frames"]) {
        const section = make("section", `replay-panel replay-panel-${name}`);
        const title = make("h4", "replay-title", name === "frames" ? "" : w[name]);
        const list = make(name === "tasks" ? "table" : "ol", "replay-list");
        section.append(title, list);
        panels.append(section);
        this.panels[name] = { title, list };
      }
      if (this.journal.simulated) {
        const note = make("p", "replay-sockets-note", w.simulated);
        this.panels.sockets.title.after(note);
      }
      body.append(source, panels);
      const keys = make("p", "replay-keys", w.keys);
      root.append(controls, this.caption, body, keys);
      this.drawSource();
      root.addEventListener("keydown", event => this.key(event));
    }

    drawSource() {
      this.code.textContent = "";
      this.lines = [];
      const text = this.journal.files[this.file] || "";
      text.replace(/\n$/, "").split("\n").forEach((line, n) => {
        // The docs' snippet markers are for the build, not the reader: a blank line
        // in their place keeps every line at its number.
        if (/^\s*# --8<-- \[(start|end):[\w-]+\]\s*$/.test(line)) line = "";
        const row = make("span", "replay-line");
        row.dataset.line = String(n + 1);
        row.append(make("span", "replay-lineno", String(n + 1).padStart(3)), make("span", "replay-text", line), "\n");
        this.code.append(row);
        this.lines.push(row);
      });
    }

    key(event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.target.tagName === "SELECT") return;
      const actions = {
        ArrowRight: () => this.go(this.index + 1),
        ArrowLeft: () => this.go(this.index - 1),
        " ": () => this.toggle(),
        n: () => this.nextTurn(),
        t: () => this.nextStepOf(this.chosen),
        Home: () => this.go(0),
        End: () => this.go(this.journal.steps.length - 1),
      };
      const action = actions[event.key];
      if (!action) return;
      event.preventDefault();
      event.stopPropagation(); // Material's own keys (n, p: pages) stay out of it.
      action();
    }

    go(index, keepPlaying) {
      const last = this.journal.steps.length - 1;
      this.index = Math.max(0, Math.min(last, index));
      if (!keepPlaying) this.stop();
      this.show();
    }

    nextTurn() {
      const steps = this.journal.steps;
      const next = steps.findIndex((step, i) => i > this.index && step.kind === "select");
      this.go(next < 0 ? steps.length - 1 : next);
    }

    nextStepOf(task) {
      const steps = this.journal.steps;
      const next = steps.findIndex((step, i) => i > this.index && step.task === task);
      if (next >= 0) this.go(next);
    }

    toggle() {
      if (this.timer) { this.stop(); return; }
      if (this.index >= this.journal.steps.length - 1) this.index = -1;
      this.timer = setInterval(() => {
        if (this.index >= this.journal.steps.length - 1) this.stop();
        else this.go(this.index + 1, true);
      }, PLAY_MS);
      this.go(this.index + 1, true);
      this.buttons.play.textContent = "❚❚";
      this.buttons.play.setAttribute("aria-label", this.words.pause);
    }

    stop() {
      if (!this.timer) return;
      clearInterval(this.timer);
      this.timer = null;
      this.buttons.play.textContent = "▶▶";
      this.buttons.play.setAttribute("aria-label", this.words.play);
    }

    show() {
      const w = this.words;
      const journal = this.journal;
      const step = journal.steps[this.index];
      const last = journal.steps.length - 1;
      this.root.dataset.step = String(this.index);
      this.position.textContent = this.lang === "zh"
        ? `${w.step} ${this.index + 1} ${w.of} ${last + 1} 步 · 第 ${step.turn} ${w.turn}`
        : `${w.step} ${this.index + 1} ${w.of} ${last + 1} · ${w.turn} ${step.turn}`;
      let caption = this.captions.of(step, this.index);
      if (this.index === last && journal.truncated) caption += " " + w.truncated;
      this.caption.textContent = caption;
      // A focused button that turns disabled loses the focus, but not at once:
      // the browser moves it to the page's body at its next rendering.  A key
      // pressed before then still reaches the player, one pressed after goes
      // to the page (a busy machine renders in between: space after Home did
      // nothing).  So hand the focus to the player before disabling the button.
      const disable = {
        start: this.index === 0, back: this.index === 0,
        forward: this.index === last, turn: this.index === last,
      };
      for (const [name, off] of Object.entries(disable)) {
        const button = this.buttons[name];
        if (off && document.activeElement === button) this.root.focus({ preventScroll: true });
        button.disabled = off;
      }
      this.showTasks(step);
      this.showFrames(step);
      this.showList("ready", step.state.ready.map(cb => this.callback(cb)));
      this.showList("timers", step.state.timers.map(([when, cb]) =>
        `${when.toFixed(1)} ms: ${this.callback(cb)}`));
      this.showList("sockets", step.state.sockets.map(cb => {
        const who = cb.wakes !== undefined ? ` → ${journal.tasks[cb.wakes]}` : "";
        return `${this.lang === "zh" ? "套接字" : "socket"} ${cb.fd}: ${cb.fn}${who}`;
      }));
      this.showList("queue", step.state.queue.map(shortUrl));
      this.showSource(step);
    }

    callback(cb) {
      const names = this.journal.tasks;
      const owner = cb.task !== undefined ? `${names[cb.task]}: ` : "";
      const fd = cb.fd !== undefined ? ` (${this.lang === "zh" ? "套接字" : "socket"} ${cb.fd})` : "";
      const wakes = cb.wakes !== undefined ? ` → ${names[cb.wakes]}` : "";
      return `${owner}${cb.fn}${fd}${wakes}`;
    }

    showList(name, items) {
      const list = this.panels[name].list;
      list.textContent = "";
      if (!items.length) list.append(make("li", "replay-empty", this.words.none));
      items.forEach(text => list.append(make("li", "", text)));
    }

    showTasks(step) {
      const table = this.panels.tasks.list;
      table.textContent = "";
      step.state.tasks.forEach((task, number) => {
        const row = make("tr", `replay-task replay-${task.state}`);
        row.dataset.task = String(number);
        if (number === step.task) row.classList.add("replay-current");
        if (number === this.chosen) row.classList.add("replay-chosen");
        const name = make("td", "replay-task-name", this.journal.tasks[number]);
        const state = make("td", "replay-state", this.words.states[task.state] || task.state);
        // Where it is, and under it what it waits for.
        const place = make("td", "replay-place");
        place.append(make("span", "replay-where", this.captions.where(task.frames)));
        if (task.waits) {
          // Woken, its step not taken yet: what it waited for has come.
          const c = this.captions;
          const text = task.state === "ready"
            ? (this.lang === "zh" ? c.arrived(task.waits, task.frames) : c.waited(task.waits, task.frames))
            : c.wait(task.waits, task.frames);
          place.append(make("span", "replay-waits", text));
        }
        row.append(name, state, place);
        row.addEventListener("click", () => {
          this.chosen = number;
          this.taskSelect.value = String(number);
          this.show();
        });
        table.append(row);
      });
    }

    showFrames(step) {
      const w = this.words;
      // The task that took this step, or else the one chosen in the menu.
      const shown = step.task !== undefined ? step.task : this.chosen;
      const task = step.state.tasks[shown];
      const name = this.journal.tasks[shown];
      this.panels.frames.title.textContent = this.lang === "zh" ? `${name} 的${w.frames.replace("：", "")}` : `${w.frames} ${name}`;
      const list = this.panels.frames.list;
      list.textContent = "";
      if (!task || !task.frames.length) {
        list.append(make("li", "replay-empty", this.words.none));
        return;
      }
      task.frames.forEach(number => {
        const [path, line, fn] = this.journal.frames[number];
        const item = make("li", "replay-frame");
        const link = make("button", "replay-frame-link", `${shortFile(path)}:${line} ${fn}`);
        link.type = "button";
        link.addEventListener("click", () => {
          if (!(path in this.journal.files)) return;
          this.file = path;
          this.fileSelect.value = path;
          this.drawSource();
          this.show();
          this.scrollTo(line);
        });
        const code = (this.journal.files[path] || "").split("\n")[line - 1];
        item.append(link);
        if (code !== undefined) item.append(make("code", "replay-frame-code", code.trim()));
        list.append(item);
      });
    }

    showSource(step) {
      for (const row of this.code.querySelectorAll(".replay-marked")) {
        row.classList.remove("replay-marked", "replay-current-line");
        row.querySelector(".replay-badges")?.remove();
      }
      let focus = null;
      step.state.tasks.forEach((task, number) => {
        // The deepest frame of this file: where the task is, in this file.
        const here = task.frames.map(f => this.journal.frames[f]).filter(([path]) => path === this.file);
        if (!here.length) return;
        const line = here[here.length - 1][1];
        const row = this.lines[line - 1];
        if (!row) return;
        row.classList.add("replay-marked");
        let badges = row.querySelector(".replay-badges");
        if (!badges) {
          badges = make("span", "replay-badges");
          row.insertBefore(badges, row.lastChild); // After the code, before the newline.
        }
        const badge = make("span", `replay-badge replay-${task.state}`, this.journal.tasks[number]);
        badges.append(badge);
        if (number === step.task || (step.task === undefined && number === this.chosen)) {
          row.classList.add("replay-current-line");
          focus = line;
        }
      });
      if (focus) this.scrollTo(focus);
    }

    scrollTo(line) {
      const row = this.lines[line - 1];
      if (!row) return;
      const box = this.code;
      const top = row.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - row.offsetHeight) {
        box.scrollTop = Math.max(0, top - box.clientHeight / 3);
      }
    }
  }

  function play(root, journal) {
    if (!Array.isArray(journal.steps) || !journal.steps.length) {
      root.textContent = WORDS[language(root)].empty;
      root.dataset.ready = "empty";
      return;
    }
    root.player = new Player(root, expand(journal));
    root.dataset.ready = "yes";
  }

  function start(root) {
    if (root.dataset.ready) return;
    root.dataset.ready = "loading";
    const inline = root.querySelector("script.replay-data");
    const words = WORDS[language(root)];
    if (inline) {
      play(root, JSON.parse(inline.textContent));
      return;
    }
    root.textContent = words.loading;
    fetch(root.dataset.journal)
      .then(response => {
        if (!response.ok) throw new Error(`${response.status} ${response.url}`);
        return response.json();
      })
      .then(journal => play(root, journal))
      .catch(error => {
        root.textContent = words.failed;
        root.dataset.ready = "failed";
        console.warn("replay:", error);
      });
  }

  // A run made in the page (docs/javascripts/run.js) opens its journal here.
  window.replayJournal = play;

  function startAll() {
    document.querySelectorAll("div.replay").forEach(start);
  }

  // Material swaps pages in without reloading when instant loading is on;
  // its document$ tells of each new page.  Without it, the page is loaded once.
  if (typeof document$ !== "undefined") document$.subscribe(startAll);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
  else startAll();
})();
