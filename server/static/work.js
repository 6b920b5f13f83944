// Work that lasts (docs/server.md, "Saved work and share links"): the program, its language and
// the machine's parameters are kept as they are typed, in this browser (localStorage) and on the
// server (POST /api/work: per student of the roster, or per browser for an anonymous page); a share
// link (POST /api/programs) and a file (download, upload) carry a program elsewhere.
// It uses save.js's saveAs() and app.js's editor, program(), machine(), setLanguage(), api(), state and $; app.js's
// start() calls work.start(GET /api/params's answer) once the editor and the machine's fields are there.
"use strict";

const work = (() => {
  const SAVE_AFTER_MS = 600;     // after the last keystroke: one request per pause, not per key
  let timer = null, loading = false, files = {};   // files: language -> the server's file name
  // notes in order: a save's "saved" must not hide a refusal shown after the edit it saves
  let notes = 0, lastBad = 0;

  // One entry per token in this browser, so that two students on one machine keep their own work
  // (FNV-1a of the token: a name for the entry, not a secret).
  function localKey() {
    let h = 0x811c9dc5;
    for (const ch of token()) h = Math.imul(h ^ ch.codePointAt(0), 0x01000193) >>> 0;
    return "s2mc-work:" + h.toString(16);
  }

  // An anonymous page's work is this browser's: a random id kept in localStorage names it.
  function browserId() {
    let id = localStorage.getItem("s2mc-browser");
    if (!id) {
      id = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem("s2mc-browser", id);
    }
    return id;
  }

  function note(text, bad) {
    notes += 1;
    if (bad) lastBad = notes;
    $("work-status").textContent = text;
    $("work-status").className = bad ? "bad" : "";
  }

  const current = () => ({ ...program(), params: machine() });

  // A kept program into the page: the parameters it names, the others at their defaults.
  function apply(p) {
    loading = true;
    try {
      setLanguage(p.language);
      $("opt").value = String(p.opt);
      editor.setValue(p.source);
      editor.clearGutter("breakpoints");
      for (const q of state.params) $("param-" + q.name).value = q.name in p.params ? p.params[q.name] : q.default;
    } finally {
      loading = false;
    }
  }

  function changed() {
    if (loading) return;
    localStorage.setItem(localKey(), JSON.stringify({ ...current(), synced: false }));
    clearTimeout(timer);
    const after = notes;
    timer = setTimeout(() => push(after), SAVE_AFTER_MS);
  }

  async function push(after = notes) {
    const sent = current();
    try {
      const res = await api("POST", "/api/work", { ...sent, browser: browserId() });
      // typed on meanwhile: the next push carries that; else this browser's copy is the server's
      const kept = JSON.parse(localStorage.getItem(localKey()) || "null");
      if (kept && JSON.stringify({ ...kept, synced: undefined }) === JSON.stringify({ ...sent, synced: undefined })) {
        localStorage.setItem(localKey(), JSON.stringify({ ...sent, synced: true }));
      }
      if (lastBad <= after) note(`saved on the server at ${new Date(res.saved).toLocaleTimeString()}`);
    } catch (e) {
      note(`kept in this browser only (the server did not keep it: ${e.message})`, true);
    }
  }

  async function share() {
    const res = await api("POST", "/api/programs", current());
    const link = $("share-link");
    link.href = link.textContent = res.url;
    link.hidden = false;
    try { await navigator.clipboard.writeText(res.url); note("share link copied"); } catch (e) { note("share link made"); }
  }

  function download() {
    saveAs(new Blob([editor.getValue()], { type: "text/plain;charset=utf-8" }), files[$("language").value]);
    note(`downloaded as ${files[$("language").value]}`);
  }

  // A file from this computer: its extension names its language (files, the server's own
  // names: program.rz, program.s); it must be UTF-8 text within the server's size limit.
  async function upload(file) {
    const ext = file.name.includes(".") ? file.name.slice(file.name.lastIndexOf(".")).toLowerCase() : "";
    const language = Object.keys(files).find((k) => files[k].endsWith(ext) && ext);
    const kinds = Object.values(files).map((f) => f.slice(f.lastIndexOf("."))).join(" or ");
    if (!language) throw new Error(`${file.name}: not a program file (${kinds})`);
    if (file.size > state.limits.source_bytes) {
      throw new Error(`${file.name} is ${file.size} bytes; this server takes programs of at most ${state.limits.source_bytes}`);
    }
    let text;
    try { text = new TextDecoder("utf-8", { fatal: true }).decode(await file.arrayBuffer()); } catch (e) { text = null; }
    if (text === null || text.includes("\0")) throw new Error(`${file.name}: not UTF-8 text`);
    setLanguage(language);
    editor.setValue(text);
    editor.clearGutter("breakpoints");
    changed();
    note(`${file.name} loaded`);
  }

  // The controls, made here so that index.html and app.js change by one line each.
  function controls() {
    const box = document.createElement("span");
    box.id = "work";
    box.innerHTML = `<button id="share" type="button">Share</button> <button id="download" type="button">Download</button>
      <label class="upload">Upload <input id="upload" type="file"></label>
      <a id="share-link" hidden></a> <span id="work-status" role="status"></span>`;
    $("status").before(box);
    $("upload").accept = Object.values(files).map((f) => f.slice(f.lastIndexOf("."))).join(",");
    $("share").onclick = () => share().catch((e) => note(e.message, true));
    $("download").onclick = download;
    $("upload").onchange = (e) => {
      const f = e.target.files[0];
      e.target.value = "";
      if (f) upload(f).catch((err) => note(err.message, true));
    };
  }

  // What the page opens on: a share link's program (?program=ID); else this browser's copy when
  // the server never got it; else the server's copy; else this browser's; else what app.js loaded.
  async function restore() {
    const shared = new URLSearchParams(location.search).get("program");
    if (shared) {
      apply(await api("GET", `/api/programs/${encodeURIComponent(shared)}`));
      return note("the shared program is loaded: your saved work comes back without ?program= in the address");
    }
    const local = JSON.parse(localStorage.getItem(localKey()) || "null");
    let server = null;
    try {
      server = (await api("GET", `/api/work?browser=${browserId()}`)).work;
    } catch (e) {
      note(`the server's copy could not be read: ${e.message}`, true);
    }
    if (local && !local.synced) {
      apply(local);
      push();
    } else if (server || local) {
      apply(server || local);
      if (server) note(`your work as saved at ${new Date(server.saved).toLocaleString()}`);
    }
  }

  async function start(info) {
    files = info.files;
    controls();
    try {
      await restore();
    } catch (e) {
      note(e.message, true);
    }
    // every change from now on: the editor (CodeMirror, or the textarea), the language and the fields
    if (editor.on) editor.on("changes", changed);
    $("source").addEventListener("input", changed);
    for (const el of [$("language"), $("opt"), $("params")]) {
      el.addEventListener("change", changed);
      el.addEventListener("input", changed);
    }
  }

  return { start };
})();
