// The lecturer's page (/lecturer?token=TEACHER): the class's progress per exercise from the
// submissions the server records (GET /api/progress, the teacher token only), asked for again
// every progress_seconds, and the gradebook CSV (GET /api/gradebook.csv).
"use strict";

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
if (query.get("token")) sessionStorage.setItem("s2mc-token", query.get("token"));
const headers = () => ({ Authorization: "Bearer " + (sessionStorage.getItem("s2mc-token") || "") });

async function get(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

function status(text, bad) {
  $("status").textContent = text;
  $("status").className = bad ? "bad" : "";
}

function cells(tr, values, tag) {
  for (const v of values) {
    const c = document.createElement(tag || "td");
    c.textContent = v === null || v === undefined ? "" : v;
    tr.append(c);
  }
  return tr;
}

// One mark per verdict, so that a class's row of questions fits the screen; the word itself is the
// cell's title and what a screen reader reads.
const MARKS = { right: "\u2713", WRONG: "\u2717", missing: "\u00b7", timing: "t" };

function show(p) {
  const n = p.students.length;
  $("summary").textContent = `${p.submitted} of ${n} student${n === 1 ? "" : "s"} submitted a check; ` +
    `${p.passed} passed. Updated ${new Date().toLocaleTimeString()}, every ${p.progress_seconds} s.`;
  const t = $("progress");
  t.textContent = "";
  const names = p.questions.map((q) => q.name);
  const head = cells(t.insertRow(), ["id", "name", "submissions", "last (UTC)", "right", "checked", "predictions",
                                     "passed", ...names], "th");
  for (const th of [...head.children].slice(8)) th.className = "question";
  for (const s of p.students) {
    const tr = cells(t.insertRow(), [s.id, s.name, s.submissions, s.last && s.last.replace("T", " "), s.right,
                                     s.checked, s.predictions, s.passed === null ? "" : (s.passed ? "yes" : "no")]);
    tr.dataset.student = s.id;
    for (const q of names) {
      const td = cells(tr, [MARKS[s[q]] || s[q]]).lastChild;
      if (s[q]) Object.assign(td, { className: s[q], title: s[q] });
      if (s[q]) td.setAttribute("aria-label", s[q]);
    }
  }
  // the last row: how many students' last verdict on each question is right
  const foot = cells(t.insertRow(), [`students right (of ${n})`, "", "", "", "", "", "", "",
                                     ...p.questions.map((q) => q.right)], "th");
  foot.id = "question-counts";
}

async function refresh() {
  let wait = 5;
  try {
    const p = await (await get("/api/progress")).json();
    show(p);
    status("");
    wait = p.progress_seconds;
  } catch (e) {
    status(e.message, true);
  }
  setTimeout(refresh, wait * 1000);
}

async function gradebook() {
  saveAs(await (await get("/api/gradebook.csv")).blob(), "gradebook.csv");
}

$("gradebook").onclick = () => gradebook().catch((e) => status(e.message, true));
refresh().then(() => { document.body.dataset.ready = "yes"; });   // the browser tests wait for this
