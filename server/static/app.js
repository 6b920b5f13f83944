// The s2mc lab page: everything it shows comes from the JSON API of `s2mc serve` (docs/server.md).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { params: [], examples: [], session: null, breakpoints: [], lineMarks: [] };

// -- the API ---------------------------------------------------------------------------------------
// The token (the class's, or a student's own) arrives once in the address (?token=...) and is kept
// in this browser (localStorage), so that a share link or another tab of this server opens without
// it; a page that has none, or one the server refuses, asks for it (askToken). "Forget the token"
// removes it, for a computer that others use after you.
const TOKEN_KEY = "s2mc-token";
const query = new URLSearchParams(location.search);
if (query.get("token")) localStorage.setItem(TOKEN_KEY, query.get("token"));
const token = () => localStorage.getItem(TOKEN_KEY) || "";

function withToken(headers) {
  if (token()) headers["Authorization"] = "Bearer " + token();
  return headers;
}

async function api(method, path, body) {
  const headers = withToken({ "Content-Type": "application/json" });
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) {
    const wait = response.headers.get("Retry-After");
    const error = new Error(data.error + (wait && !/try again/.test(data.error) ? ` (try again in ${wait} s)` : ""));
    error.status = response.status;
    throw error;
  }
  return data;
}

// The server wants a token this page does not have: the form takes it, keeps it, and the page
// starts again at the same address (a share link's ?program= included).
function askToken(why) {
  $("token-why").textContent = why;
  $("token-form").hidden = false;
  $("token-input").focus();
  $("token-form").onsubmit = (e) => {
    e.preventDefault();
    const given = $("token-input").value.trim();
    if (!given) return;
    localStorage.setItem(TOKEN_KEY, given);
    location.reload();
  };
}

function setupForget() {
  $("token-forget").hidden = !token();
  $("token-forget").onclick = () => {
    localStorage.removeItem(TOKEN_KEY);
    location.assign(location.pathname);
  };
}

function status(text, bad) {
  $("status").textContent = text;
  $("status").className = bad ? "bad" : "";
}

async function busy(what, fn) {
  status(what + "...");
  try {
    const out = await fn();
    status("");
    return out;
  } catch (e) {
    status(e.message, true);
    throw e;
  }
}

// -- the editor: CodeMirror when the server has it, else a plain textarea -----------------------------
let editor;
function setupEditor(keywords) {
  const area = $("source");
  if (window.CodeMirror) {
    // Rz: indentation-structured, // comments, the lexer's keywords (from the server)
    CodeMirror.defineSimpleMode("rz", { start: [
      { regex: /\/\/.*/, token: "comment" },
      { regex: /"(?:[^\\"]|\\.)*"/, token: "string" },
      { regex: new RegExp(`\\b(?:${keywords.join("|")})\\b`), token: "keyword" },
      { regex: /0x[0-9a-fA-F]+|\d+/, token: "number" },
      { regex: /[A-Za-z_]\w*(?=\s*\()/, token: "def" },
      { regex: /[A-Za-z_]\w*/, token: "variable" },
    ] });
    CodeMirror.defineSimpleMode("s2asm", { start: [
      { regex: /;.*/, token: "comment" },
      { regex: /"(?:[^\\"]|\\.)*"/, token: "string" },
      { regex: /[A-Za-z_.][\w.]*:/, token: "tag", sol: true },
      { regex: /\.[A-Za-z]+/, token: "keyword" },
      { regex: /\b[rR]\d+\b|\b(?:sp|fp)\b/, token: "variable-2" },
      { regex: /-?(?:0x[0-9a-fA-F]+|\d+)\b/, token: "number" },
      { regex: /[A-Za-z_][\w.]*/, token: "variable" },
    ] });
    editor = CodeMirror.fromTextArea(area, { lineNumbers: true, styleActiveLine: true, matchBrackets: true,
                                             gutters: ["breakpoints", "CodeMirror-linenumbers"], indentUnit: 4,
                                             extraKeys: editorKeys(), screenReaderLabel: area.getAttribute("aria-label") });
    editor.on("gutterClick", (cm, n) => toggleBreak(n + 1));
    document.body.classList.add("codemirror");
  } else {
    // no CodeMirror on this server: the same calls on a textarea (no highlighting, no gutter)
    editor = { getValue: () => area.value, setValue: (v) => { area.value = v; }, setOption() {},
               addLineClass() {}, removeLineClass() {}, setGutterMarker() {}, clearGutter() {}, scrollIntoView() {} };
    document.body.classList.add("plain");
  }
}

function setLanguage(language) {
  $("language").value = language;
  editor.setOption("mode", language === "rz" ? "rz" : "s2asm");
}

// -- the machine's parameters: one field per declared parameter (simulator/params.toml) ---------------
function buildParams(params) {
  const form = $("params");
  form.textContent = "";
  for (const p of params) {
    const label = document.createElement("label");
    label.title = p.help;
    label.append(p.name.replaceAll("_", " ") + " ");
    let input;
    if (p.type === "choice") {
      input = document.createElement("select");
      for (const c of p.choices) input.add(new Option(c, c, c === p.default, c === p.default));
    } else {
      input = document.createElement("input");
      Object.assign(input, { type: "number", min: p.min, max: p.max, value: p.default, step: 1 });
    }
    input.name = p.name;
    input.id = "param-" + p.name;
    label.append(input);
    if (p.unit) label.append(" " + p.unit);
    form.append(label);
  }
}

function machine() {
  const out = {};
  for (const p of state.params) {
    const v = $("param-" + p.name).value;
    out[p.name] = p.type === "int" ? Number(v) : v;
  }
  return out;
}

function program() {
  return { source: editor.getValue(), language: $("language").value, opt: Number($("opt").value) };
}

// -- run: the output and the per-core counters --------------------------------------------------------
function table(el, rows, columns) {
  el.textContent = "";
  const head = el.insertRow();
  for (const c of columns) head.insertCell().outerHTML = `<th>${c.replaceAll("_", " ")}</th>`;
  for (const r of rows) {
    const tr = el.insertRow();
    for (const c of columns) tr.insertCell().textContent = r[c];
  }
}

async function run() {
  showTab("result");
  const res = await busy("running", () => api("POST", "/api/run", { ...program(), params: machine() }));
  $("output").textContent = res.output;
  countersTable($("counters"), res.cores);
  const c = res.config;
  const n = res.network;   // a ring or a mesh: the network's counters instead of the bus's
  const how = n
    ? `${Object.values(n.messages).reduce((a, b) => a + b, 0)} messages (` +
      Object.entries(n.messages).filter(([, k]) => k).map(([t, k]) => `${t} ${k}`).join(", ") +
      `), ${n.flits} flits, ${n.hops} hops over the ${n.topology} (link latency ${c.link_latency}, router latency ` +
      `${c.router_latency}, ${c.flit_words} words a flit), directory coherence; the network went quiet in cycle ` +
      `${n.quiet_cycle}`
    : `bus busy ${res.bus_busy_cycles} cycles (${(100 * res.bus_utilisation).toFixed(1)}%)`;
  $("totals").textContent = `${res.cycles} cycles, ${res.instructions} instructions, ${res.stall_cycles} stall cycles, ` +
    `${how} on ${c.cores} core${c.cores > 1 ? "s" : ""}, L=${c.mem_latency}` + (n ? "" : `, ${c.arbitration}`) +
    (c.consistency && c.consistency !== "sc" ? `, ${c.consistency} store buffers of ${c.store_buffer_entries}` : "");
}

// -- Rz -> assembly -----------------------------------------------------------------------------------
async function compile() {
  const res = await busy("compiling", () => api("POST", "/api/compile", program()));
  const view = $("asm-view");
  view.textContent = "";
  const lines = editor.getValue().split("\n");
  const head = view.insertRow();
  head.innerHTML = "<th>line</th><th>source</th><th>pc</th><th>instruction</th>";
  let last = undefined;
  for (const ins of res.instructions) {
    const tr = view.insertRow();
    const fresh = ins.line !== last;
    last = ins.line;
    tr.className = fresh ? "first" : "";
    tr.insertCell().textContent = fresh && ins.line ? ins.line : "";
    tr.insertCell().textContent = fresh && ins.line ? lines[ins.line - 1].trim() : "";
    tr.insertCell().textContent = ins.pc;
    tr.insertCell().textContent = ins.text;
    if (ins.line) tr.dataset.line = ins.line;
  }
  if (!res.line_table && $("language").value === "rz") {
    const note = view.createCaption();
    note.textContent = "the compiler kept no line table: the instructions without their Rz lines";
  }
}

// -- the bus timeline: the page simulator/timeline.py writes, in a frame -------------------------------
async function timeline() {
  const body = { ...program(), params: machine(), from_cycle: Number($("from-cycle").value || 0) };
  if ($("to-cycle").value) body.to_cycle = Number($("to-cycle").value);
  timelineMark(body);
  const res = await busy("building the timeline", () => api("POST", "/api/timeline", body));
  $("timeline-frame").srcdoc = res.html;
}

// While the debugger is open its current cycle is marked on the timeline (a red line).
function timelineMark(body) {
  const on = state.session && state.cycle !== null && state.cycle !== undefined;
  if (on) body.mark_cycle = state.cycle;
  $("timeline-mark").textContent = on ? `the debugger's current cycle, ${state.cycle}, is the red line (when it is in the window)` : "";
}

// -- stalls against cores -----------------------------------------------------------------------------
function coreCounts(top, most) {
  const all = Array.from({ length: top }, (_, i) => i + 1);
  if (all.length <= most) return all;
  const picked = new Set([1, top]);
  for (let n = 2; n < top && picked.size < most; n *= 2) picked.add(n);
  return [...picked].sort((a, b) => a - b);
}

function plot(runs) {
  const W = 520, H = 260, L = 70, B = 40, T = 15, R = 15;
  const xs = runs.map((r) => r.cores), ys = runs.map((r) => r.stall_cycles);
  const xmax = Math.max(...xs), ymax = Math.max(1, ...ys);
  const X = (x) => L + (xmax === 1 ? 0 : (x - 1) / (xmax - 1)) * (W - L - R);
  const Y = (y) => H - B - (y / ymax) * (H - B - T);
  const pts = runs.map((r) => `${X(r.cores)},${Y(r.stall_cycles)}`).join(" ");
  let svg = `<svg id="sweep-svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="stall cycles against cores">`;
  svg += `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" class="axis"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" class="axis"/>`;
  for (const x of xs) svg += `<text x="${X(x)}" y="${H - B + 16}" text-anchor="middle">${x}</text>`;
  for (const f of [0, 0.5, 1]) svg += `<text x="${L - 6}" y="${Y(f * ymax) + 4}" text-anchor="end">${Math.round(f * ymax)}</text>`;
  svg += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">cores</text>`;
  svg += `<text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle">stall cycles</text>`;
  svg += `<polyline points="${pts}" class="series"/>`;
  for (const r of runs) svg += `<circle cx="${X(r.cores)}" cy="${Y(r.stall_cycles)}" r="3.5"><title>${r.cores} cores: ${r.stall_cycles} stall cycles</title></circle>`;
  return svg + "</svg>";
}

async function sweep() {
  const limits = state.limits;
  const top = Math.min(Number($("sweep-max").value) || 1, Number($("param-cores").max));
  const cores = coreCounts(Math.max(1, top), limits.sweep_points);
  const res = await busy(`sweeping ${cores.length} core counts`,
                         () => api("POST", "/api/sweep", { ...program(), params: machine(), cores }));
  $("sweep-plot").innerHTML = plot(res.runs);
  // a program whose work grows with the cores (`; work: per core`) gets a time ratio, not a speedup
  const base = res.runs[0], ratio = res.work_per_core ? `time vs ${base.cores}c` : "speedup";
  table($("sweep-table"), res.runs.map((r) => ({
          ...r, [ratio]: (res.work_per_core ? r.cycles / base.cycles : base.cycles / r.cycles).toFixed(2) })),
        ["cores", "cycles", ratio, "stall_cycles", "bus_wait_cycles", "instructions", "bus_utilisation"]);
}

// -- the debugger: the interpreter of `s2mc debug`, one command at a time ------------------------------
// A click on a line: in Rz the line itself (the compiler's line table); in assembly the label
// defined there (an assembly program has no line table).
function breakSpec(line) {
  if ($("language").value === "rz") return `program.rz:${line}`;
  const m = LABEL.exec(editor.getValue().split("\n")[line - 1] || "");
  return m ? (m[1] || m[2]) : null;
}

function log(lines) {
  const pre = $("dbg-log");
  for (const l of lines) {
    const span = document.createElement("span");
    span.className = l.stream;
    span.textContent = l.text + "\n";
    pre.append(span);
  }
  pre.scrollTop = pre.scrollHeight;
}

function showState(s) {
  const here = s.cores[s.current_core];
  $("dbg-where").textContent = `cycle ${s.cycle}${s.ended ? " (the run has ended)" : ""}; core ${s.current_core} at pc ` +
    `${here.pc} (${here.where}): ${here.instruction}` + (here.line ? `; line ${here.line}` : "") +
    (s.fault ? `; ${s.fault}` : "");
  table($("dbg-cores"), s.cores, ["core", "state", "pc", "where", "instruction", "line", "function"]);
  const regs = $("dbg-regs");
  regs.textContent = "";
  for (let row = 0; row < 32; row += 8) {
    const tr = regs.insertRow();
    for (let i = row; i < row + 8; i++) tr.insertCell().innerHTML = `<b>r${i}</b> ${here.registers[i]}`;
  }
  // the store buffers (a machine with tso or pso), one row per entry, oldest first
  $("dbg-sb-box").hidden = !s.store_buffers;
  if (s.store_buffers) {
    const rows = s.store_buffers.flatMap((entries, core) => entries.length
      ? entries.map((e, i) => ({ core, entry: i, ...e }))
      : [{ core, entry: "empty", address: "", where: "", value: "", instruction: "", line: "", since: "", state: "" }]);
    table($("dbg-sb"), rows, ["core", "entry", "address", "where", "value", "instruction", "line", "since", "state"]);
  }
  showCaches(s.caches);
  showDirectory(s.network);
  state.cycle = s.cycle;
  for (const n of state.lineMarks) editor.removeLineClass(n - 1, "background", "current-line");
  state.lineMarks = [...new Set(s.cores.filter((c) => c.line && c.state !== "halted").map((c) => c.line))];
  for (const n of state.lineMarks) editor.addLineClass(n - 1, "background", "current-line");
  // the breakpoints as the debugger has them (a line a click asked for that it refused is not marked)
  state.breakpoints = s.breakpoints;
  editor.clearGutter("breakpoints");
  const labels = labelLines();
  for (const b of s.breakpoints) {
    b.line = b.line || labels[b.where];   // assembly: the line that defines the label
    if (b.line) editor.setGutterMarker(b.line - 1, "breakpoints", marker());
  }
}

// The editor line (1-based) that defines each label of an assembly program.
const LABEL = /^\s*(?::([A-Za-z_.][\w.]*)|([A-Za-z_.][\w.]*):)/;
function labelLines() {
  const out = {};
  if ($("language").value !== "asm") return out;
  editor.getValue().split("\n").forEach((text, i) => {
    const m = LABEL.exec(text);
    if (m) out[m[1] || m[2]] = i + 1;
  });
  return out;
}

function marker() {
  const m = document.createElement("span");
  m.className = "breakpoint";
  m.textContent = "\u25cf";
  return m;
}

async function debugStart() {
  if (state.session) await debugStop();
  showTab("debug");
  $("dbg-log").textContent = "";
  const res = await busy("starting the debugger",
                        () => api("POST", "/api/debug", { ...program(), params: machine(), poll: true }));
  state.session = res.id;
  keepSession();
  showState(res.state);
}

// The server drops a session whose page stopped polling (poll_seconds), so a page that went away
// without a word holds no process; a page that is left or reloaded closes its session at once.
function keepSession() {
  clearInterval(state.poller);
  state.poller = setInterval(() => {
    if (state.session) api("GET", `/api/debug/${state.session}`).catch(() => { state.session = null; });
  }, state.limits.poll_seconds * 1000 / 3);
}

function closeOnLeave() {
  if (!state.session) return;
  // keepalive: the request outlives the page (sendBeacon cannot send DELETE nor the token header)
  fetch(`/api/debug/${state.session}`, { method: "DELETE", headers: withToken({}), keepalive: true });
  state.session = null;
}

async function command(line) {
  if (!state.session) await debugStart();
  log([{ stream: "cmd", text: "(s2mc) " + line }]);
  let res;
  try {
    res = await busy(line, () => api("POST", `/api/debug/${state.session}`, { command: line }));
  } catch (e) {
    log([{ stream: "err", text: e.message }]);
    if (/session/.test(e.message)) state.session = null;
    return;
  }
  log(res.output);
  showState(res.state);
  if (res.ended) state.session = null;
}

async function debugStop() {
  if (!state.session) return;
  const id = state.session;
  state.session = null;
  state.cycle = null;
  try { await api("DELETE", `/api/debug/${id}`); } catch (e) { /* it had ended */ }
  for (const n of state.lineMarks) editor.removeLineClass(n - 1, "background", "current-line");
  log([{ stream: "cmd", text: "(the session was closed)" }]);
}

async function toggleBreak(line) {
  if (!state.session) await debugStart();
  const have = (state.breakpoints || []).find((b) => b.line === line);
  if (have) return command(`delete ${have.number}`);
  const spec = breakSpec(line);
  if (!spec) return status(`line ${line} defines no label: in assembly click a label's line, or type break *PC`, true);
  return command(`break ${spec}`);
}

// -- exercises ----------------------------------------------------------------------------------------
async function loadExercises() {
  const { sections } = await api("GET", "/api/exercises");
  const form = $("exercises");
  for (const sec of sections) {
    const box = document.createElement("fieldset");
    box.innerHTML = `<legend></legend><p></p>`;
    box.querySelector("legend").textContent = sec.title;
    box.querySelector("p").textContent = sec.text;
    for (const q of sec.quantities) {
      const row = document.createElement("div");
      row.className = "question";
      row.dataset.name = q.name;
      row.innerHTML = `<span class="asks"></span> <label>prediction <input name="predict" size="8"></label>` +
        ` <label>measured <input name="measured" size="8"></label> <span class="verdict"></span>` +
        `<details><summary>how to measure</summary><pre></pre></details>`;
      row.querySelector(".asks").textContent = q.asks + (q.checked ? "" : " (a timing on your machine: not marked)");
      row.querySelector("pre").textContent = q.code;
      row.querySelector("[name=predict]").id = `predict-${q.name}`;
      row.querySelector("[name=measured]").id = `measured-${q.name}`;
      box.append(row);
    }
    form.append(box);
  }
}

async function check() {
  const answers = {};
  for (const row of document.querySelectorAll(".question")) {
    const get = (k) => { const v = row.querySelector(`[name=${k}]`).value.trim(); return v === "" ? null : Number(v); };
    answers[row.dataset.name] = { predict: get("predict"), measured: get("measured") };
  }
  const res = await busy("checking (the first check measures the answers: it takes a while)",
                         () => api("POST", "/api/exercises/check", { answers }));
  for (const m of res.marks) {
    const v = document.querySelector(`.question[data-name="${m.name}"] .verdict`);
    v.textContent = `${m.verdict}: ${m.hint}`;      // the hint says what to do next, never the value
    v.className = "verdict " + (m.right === false ? "bad" : "good");
  }
  $("grade").textContent = `${res.passed ? "Passed" : "Not passed"}: ${res.summary}`;
  $("grade").className = res.passed ? "good" : "bad";
}

// -- the keys: one table, which both handles them and lists them on the page --------------------------
const KEYS = [
  { keys: "Ctrl+Enter", does: "run the program", match: (e) => e.key === "Enter" && (e.ctrlKey || e.metaKey),
    act: () => quiet(run)() },
  { keys: "F10", does: "debugger: next (over calls)", match: (e) => e.key === "F10", act: () => debugKey("next") },
  { keys: "F11", does: "debugger: step", match: (e) => e.key === "F11", act: () => debugKey("step") },
  { keys: "Esc", does: "leave the editor (to the next control)", match: (e) => e.key === "Escape" && inEditor(),
    act: () => leaveEditor() },
  { keys: "Tab, Shift+Tab", does: "the next or previous control, from the editor too", match: () => false },
  { keys: "Ctrl+], Ctrl+[", does: "indent or outdent the editor's lines (Enter keeps the indentation)",
    match: () => false },
];

function setupKeys() {
  const list = $("keys");
  for (const k of KEYS) {
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = k.keys;
    dd.textContent = k.does;
    list.append(dt, dd);
  }
  // capture: the keys work wherever the focus is, the editor included
  addEventListener("keydown", (e) => {
    const k = KEYS.find((key) => key.match(e));
    if (!k) return;
    e.preventDefault();
    e.stopPropagation();
    k.act();
  }, true);
}

// CodeMirror's own keys: Tab moves on (the editor never traps the keyboard); Enter keeps the
// indentation and Ctrl+] / Ctrl+[ (CodeMirror's defaults) indent.
function editorKeys() {
  return { Tab: false, "Shift-Tab": false };
}

function inEditor() {
  return $("editor-box").contains(document.activeElement);
}

function leaveEditor() {
  // the first control after the editor, in the page's order
  const all = [...document.querySelectorAll("button, input, select, textarea, summary, a[href], iframe")];
  const next = all.find((el) => !$("editor-box").contains(el) && el.offsetParent !== null &&
    $("editor-box").compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  (next || $("run")).focus();
}

function debugKey(cmd) {
  showTab("debug");
  quiet(command)(cmd);
}

// -- a ring or a mesh while stepping: each line in play at its home, and the messages in flight ------
function showDirectory(net) {
  $("dbg-dir-box").hidden = !net;
  if (!net) return;
  $("dbg-dir-legend").textContent = `${net.interconnect}, ${net.coherence} coherence: every line in play ` +
    "(a copy in a cache, or a message for it), its home tile and the directory's entry there; S^D: waiting " +
    "for the old owner's data";
  const rows = net.lines.map((l) => ({
    line: l.line, address: l.address, where: l.where, home: l.home, state: l.state,
    owner: l.owner === null ? "" : l.owner, sharers: l.sharers.join(" "),
    copies: l.copies.map((c) => `core ${c.core} ${c.state}${c.evicting ? " (evicting)" : ""}`).join(", "),
    queued: l.queue }));
  table($("dbg-dir"), rows, ["line", "address", "where", "home", "state", "owner", "sharers", "copies", "queued"]);
  const msgs = net.messages.map((m) => ({ ...m,
    where: m.delivered ? `arriving at tile ${m.dst} in cycle ${m.delivered}`
      : `router ${m.router}, port ${m.port} from cycle ${m.ready}` }));
  table($("dbg-net"), msgs, ["type", "src", "dst", "line", "requester", "where"]);
}

// -- the caches while stepping: each core's valid lines, coloured by their coherence state ---------
function showCaches(caches) {
  $("dbg-cache-box").hidden = !caches;
  if (!caches) return;
  const sets = caches.lines / caches.ways;
  $("dbg-cache-legend").textContent = `${caches.protocol.toUpperCase()}: ${caches.lines} lines per core ` +
    `(${sets} sets x ${caches.ways} ways, ${caches.line_words} words a line); ` +
    `each box a line by set and way, its coherence state in it; a blank box is invalid`;
  const box = $("dbg-caches");
  box.textContent = "";
  caches.cores.forEach((lines, core) => {
    const row = document.createElement("div");
    row.className = "cache-core";
    row.dataset.core = core;
    row.setAttribute("role", "list");
    row.setAttribute("aria-label", `core ${core}'s cache`);
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = `core ${core}`;
    row.append(who);
    const valid = new Map(lines.map((l) => [l.set * caches.ways + l.way, l]));
    for (let slot = 0; slot < caches.lines; slot++) {
      const l = valid.get(slot), cell = document.createElement("span");
      cell.setAttribute("role", "listitem");
      cell.className = "slot" + (l ? " " + l.state : "");
      const where = `set ${Math.floor(slot / caches.ways)} way ${slot % caches.ways}`;
      if (l) {
        Object.assign(cell.dataset, { line: l.line, state: l.state });
        cell.textContent = l.state;
        cell.title = `${where}: line ${l.line}..${l.line + caches.line_words - 1} (${l.where}), ${l.state}`;
      } else {
        cell.textContent = "\u00a0";
        cell.title = `${where}: invalid`;
      }
      cell.setAttribute("aria-label", cell.title);
      row.append(cell);
    }
    box.append(row);
  });
}

// -- the counters: one row per counter, one column per core, so that 8 cores fit the page -----------
function countersTable(el, cores) {
  el.querySelectorAll("tr").forEach((tr) => tr.remove());
  const head = el.insertRow();
  head.insertCell().outerHTML = "<th>counter</th>";
  for (const c of cores) head.insertCell().outerHTML = `<th>core ${c.core}</th>`;
  for (const name of Object.keys(cores[0]).filter((k) => k !== "core")) {
    const tr = el.insertRow();
    tr.dataset.counter = name;
    tr.insertCell().textContent = name.replaceAll("_", " ");
    for (const c of cores) tr.insertCell().textContent = c[name];
  }
}

// -- two runs side by side: the program on machine A and on machine B --------------------------------
function describeMachine(params) {
  const changed = state.params.filter((p) => String(params[p.name]) !== String(p.default))
    .map((p) => `${p.name.replaceAll("_", " ")} ${params[p.name]}`);
  return changed.length ? changed.join(", ") : "the defaults";
}

function setupCompare() {
  for (const side of ["a", "b"]) {
    $(`cmp-set-${side}`).onclick = () => {
      state[`cmp_${side}`] = machine();
      $(`cmp-${side}`).textContent = `${side.toUpperCase()}: ${describeMachine(state[`cmp_${side}`])}`;
    };
  }
  $("cmp-go").onclick = quiet(compareRuns);
}

// The totals and each per-core counter summed over the cores, for one run.
function runFigures(res) {
  const out = { cycles: res.cycles, instructions: res.instructions, stall_cycles: res.stall_cycles,
                bus_busy_cycles: res.bus_busy_cycles, bus_utilisation: res.bus_utilisation.toFixed(4) };
  for (const name of Object.keys(res.cores[0]).filter((k) => k !== "core" && !(k in out)))
    out[name + " (all cores)"] = res.cores.reduce((sum, c) => sum + c[name], 0);
  return out;
}

async function compareRuns() {
  const a = state.cmp_a || machine(), b = state.cmp_b || machine();
  const [ra, rb] = await busy("running A and B", () => Promise.all(
    [a, b].map((params) => api("POST", "/api/run", { ...program(), params }))));
  const fa = runFigures(ra), fb = runFigures(rb);
  const el = $("cmp-table");
  el.textContent = "";
  const cap = el.createCaption();
  cap.textContent = `A: ${describeMachine(a)}; B: ${describeMachine(b)}; a marked row differs`;
  const head = el.insertRow();
  for (const h of ["counter", "A", "B", "B - A"]) head.insertCell().outerHTML = `<th>${h}</th>`;
  for (const name of [...new Set([...Object.keys(fa), ...Object.keys(fb)])]) {
    const tr = el.insertRow();
    const va = fa[name], vb = fb[name];
    const differs = String(va) !== String(vb);
    tr.className = differs ? "differs" : "";
    tr.dataset.counter = name;
    const d = Number(vb) - Number(va);
    const delta = !differs || Number.isNaN(d) ? "" : (d > 0 ? "+" : "") + (Number.isInteger(d) ? d : d.toFixed(4));
    for (const v of [name.replaceAll("_", " "), va ?? "", vb ?? "", delta]) tr.insertCell().textContent = v;
  }
}

// -- the editor opens on an example (a page with saved work shows that instead) ----------------------
const FIRST_EXAMPLE = "sum.rz";

function openOnExample() {
  if (editor.getValue().trim()) return;
  const name = state.examples.some((e) => e.name === FIRST_EXAMPLE) ? FIRST_EXAMPLE : state.examples[0]?.name;
  if (!name) return;
  $("example").value = name;
  loadExample(name);
}

// -- tabs and start-up --------------------------------------------------------------------------------
function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.tab === name);
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
  }
  for (const t of document.querySelectorAll(".tab")) t.hidden = t.id !== "tab-" + name;
}

function loadExample(name) {
  const ex = state.examples.find((e) => e.name === name);
  if (!ex) return;
  setLanguage(ex.language);
  editor.setValue(ex.source);
  editor.clearGutter("breakpoints");
}

const quiet = (fn) => (...a) => fn(...a).catch(() => {});   // the status line already says what failed

async function start() {
  const info = await api("GET", "/api/params");
  state.params = info.params;
  state.limits = info.limits;
  setupEditor(info.rz_keywords);
  buildParams(info.params);
  state.examples = await api("GET", "/api/examples");
  for (const e of state.examples) $("example").add(new Option(`${e.name}: ${e.description}`, e.name));
  setLanguage("rz");
  $("example").onchange = (e) => loadExample(e.target.value);
  $("language").onchange = (e) => setLanguage(e.target.value);
  $("run").onclick = quiet(run);
  $("compile").onclick = quiet(compile);
  $("timeline-go").onclick = quiet(timeline);
  $("sweep-go").onclick = quiet(sweep);
  $("check").onclick = quiet(check);
  $("dbg-start").onclick = quiet(debugStart);
  $("dbg-stop").onclick = quiet(debugStop);
  const buttons = { "dbg-step": "step", "dbg-next": "next", "dbg-cont": "continue", "dbg-rstep": "reverse-step",
                    "dbg-rcont": "reverse-continue", "bus-go": "bus", "regs-go": "regs",
                    "locals-go": "info locals", "sb-go": "sb" };
  for (const [id, cmd] of Object.entries(buttons)) $(id).onclick = quiet(() => command(cmd));
  $("mem-go").onclick = quiet(() => command(`mem ${$("mem-addr").value.trim() || "0"} ${$("mem-count").value || 1}`));
  $("dbg-form").onsubmit = (e) => { e.preventDefault(); quiet(command)($("dbg-command").value); $("dbg-command").value = ""; };
  for (const b of document.querySelectorAll("#tabs button")) {
    Object.assign(b, { role: "tab", onclick: () => showTab(b.dataset.tab) });
    b.setAttribute("aria-controls", "tab-" + b.dataset.tab);
    $("tab-" + b.dataset.tab).setAttribute("role", "tabpanel");
  }
  showTab("result");
  addEventListener("pagehide", closeOnLeave);
  setupKeys();
  setupCompare();
  openOnExample();
  await loadExercises();
  await work.start(info);                // work.js: saved work, share links, files
  document.body.dataset.ready = "yes";   // the browser tests wait for this
}

setupForget();
start().catch((e) => (e.status === 401 ? askToken(e.message) : status("the page could not start: " + e.message, true)));
