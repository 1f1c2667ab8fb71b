// rubric-studio web labeller. No framework, no build step, nothing fetched from elsewhere.
// Every text goes into the page with textContent; the only HTML inserted is the sample's
// fragments, which the server rendered and escaped (rubric_studio/web/_render.py).
(function () {
  "use strict";

  var body = document.body;
  var role = body.getAttribute("data-role");
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";
  var $ = function (id) { return document.getElementById(id); };

  var state = {
    view: null,      // the sample view the server sent
    verdict: null,   // "pass" | "fail" | null
    cells: {},       // criterion id -> "met" | "unmet"
    scores: {},      // analytic criterion id -> 0-10
    givenUnder: {},  // criterion id -> the wording fingerprint the cell answered
    dirty: false,
    busy: false
  };

  // -- small DOM helpers (text only) -------------------------------------------------------
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) {
    while (node.firstChild) { node.removeChild(node.firstChild); }
  }

  function setStatus(kind, message) {
    var status = $("status");
    status.setAttribute("data-state", kind);
    status.textContent = message || "";
  }

  // -- the API -----------------------------------------------------------------------------
  function api(method, path, payload) {
    var options = { method: method, credentials: "same-origin", headers: { "Accept": "application/json" } };
    if (method !== "GET") {
      options.headers["X-CSRF-Token"] = csrf;
    }
    if (payload !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(payload);
    }
    return fetch(path, options).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var error = new Error(data.error || ("the server answered " + response.status));
          error.status = response.status;
          throw error;
        }
        return data;
      });
    });
  }

  function sampleUrl(prefix, id) {
    if (id === "next" && prefix === "/api/samples/") { return "/api/samples/next?id=next"; }
    return prefix + encodeURIComponent(id);
  }

  // -- progress ----------------------------------------------------------------------------
  function showProgress(progress) {
    var node = $("progress");
    node.textContent = progress.done + " of " + progress.total +
      (progress.recheck ? " · " + progress.recheck + " to re-check" : "");
    node.title = role === "lead"
      ? "samples calling for a look that you adjudicated (" + progress.samples + " samples in all)"
      : "samples of your share you labelled";
    var list = $("lead-progress");
    if (list && progress.people) {
      clear(list);
      Object.keys(progress.people).forEach(function (name) {
        var p = progress.people[name];
        list.appendChild(el("li", "", name + ": " + p.done + " of " + p.total));
      });
    }
  }

  function refreshProgress() {
    return api("GET", "/api/progress").then(showProgress).catch(function () {});
  }

  // -- moving between samples --------------------------------------------------------------
  function openNext(after) {
    var path = "/api/samples/next" + (after ? "?after=" + encodeURIComponent(after) : "");
    return api("GET", path).then(function (data) {
      if (data.id) { return open(data.id).then(function () { return true; }); }
      if (!state.view && data.first) { return open(data.first).then(function () { return false; }); }
      return false;
    });
  }

  function open(id) {
    return api("GET", sampleUrl("/api/samples/", id)).then(function (view) {
      render(view);
      refreshProgress();
    });
  }

  function move(direction) {
    if (!state.view || state.busy) { return; }
    var target = direction < 0 ? state.view.previous : state.view.next;
    if (!target) {
      setStatus("idle", direction < 0 ? "This is the first sample." : "This is the last sample.");
      return;
    }
    var go = function () {
      setStatus("idle", "");
      return open(target);
    };
    (state.dirty ? save(false).then(function (ok) { return ok ? go() : null; }) : go()).catch(showError);
  }

  function nothingLeft() {
    return (role === "lead" ? "Nothing left to adjudicate" : "Nothing left to label") +
      ": use Previous / Next to review.";
  }

  function showError(error) {
    setStatus("error", error && error.message ? error.message : String(error));
  }

  // -- rendering a sample ------------------------------------------------------------------
  function render(view) {
    state.view = view;
    state.verdict = view.label ? view.label.verdict : null;
    state.cells = view.label ? Object.assign({}, view.label.criteria) : {};
    state.scores = view.label ? Object.assign({}, view.label.criterion_scores) : {};
    state.givenUnder = view.label ? Object.assign({}, view.label.given_under) : {};
    state.dirty = false;
    body.setAttribute("data-sample-id", view.id);
    if (location.hash !== "#" + encodeURIComponent(view.id)) {
      history.replaceState(null, "", "#" + encodeURIComponent(view.id));
    }
    $("sample-name").textContent = view.id_shown;
    $("position").textContent = "(" + view.position + " of " + view.total + (view.labelled ? ", labelled" : "") + ")";
    fragment("sample-input", "sample-input-box", view.html.input);
    fragment("sample-output", null, view.html.output);
    fragment("sample-reference", "sample-reference-box", view.html.reference);
    renderCriteria(view.criteria);
    $("note").value = view.label && view.label.note ? view.label.note : "";
    $("prev").disabled = !view.previous;
    $("next").disabled = !view.next;
    showNotices(view);
    showChoices();
    if (view.lead) { renderLead(view); }
  }

  function fragment(id, boxId, html) {
    // The server rendered and escaped this fragment: the one place HTML is inserted.
    $(id).innerHTML = html || "";
    if (boxId) { $(boxId).hidden = !html; }
  }

  function showNotices(view) {
    var notices = $("notices");
    clear(notices);
    [view.rubric.problem ? "The rubric on disk does not read; the last good version is shown. " + view.rubric.problem : null,
     view.samples_problem].forEach(function (text) {
      if (text) { notices.appendChild(el("p", "notice", text)); }
    });
  }

  function renderCriteria(criteria) {
    var box = $("criteria");
    clear(box);
    criteria.forEach(function (criterion, index) {
      var set = el("fieldset");
      set.setAttribute("data-criterion", criterion.id);
      var legend = el("legend", "", (index < 9 ? (index + 1) + ". " : "") + criterion.id);
      set.appendChild(legend);
      set.appendChild(el("p", "outcome", criterion.outcome));
      var tags = el("div", "tags");
      if (criterion.required) { tags.appendChild(el("span", "tag", "required: unmet fails the sample")); }
      if (criterion.penalty) { tags.appendChild(el("span", "tag", "penalty: met means this bad thing is present")); }
      if (criterion.contradiction) { tags.appendChild(el("span", "tag", "met when the output does not contradict this")); }
      if (tags.firstChild) { set.appendChild(tags); }
      if (criterion.bands) { set.appendChild(bandList(criterion)); }
      set.appendChild(olderNote(criterion));
      set.appendChild(cellButtons(criterion));
      box.appendChild(set);
    });
  }

  function bandList(criterion) {
    var list = el("ul", "bands");
    criterion.bands.forEach(function (band) {
      list.appendChild(el("li", "", band.from + "+: " + band.text));
    });
    list.appendChild(el("li", "", "met from " + Math.round(criterion.min_score * 100) / 10 + " of 10"));
    return list;
  }

  // A cell given under an older wording of its criterion: marked, with a way to say it still holds.
  function olderNote(criterion) {
    var note = el("p", "older");
    note.setAttribute("data-older", criterion.id);
    var words = state.view.older_wording;
    note.appendChild(el("span", "mark", words.mark + " " + words.text + ": re-check it "));
    var keep = el("button", "keep", "Still holds");
    keep.type = "button";
    keep.title = "The label still answers this wording (r: every cell marked " + words.mark + ")";
    keep.addEventListener("click", function () { recheck(criterion); });
    note.appendChild(keep);
    note.hidden = true;
    return note;
  }

  function isOlder(criterion) {
    var given = state.givenUnder[criterion.id];
    return state.cells[criterion.id] !== undefined && given !== undefined && given !== criterion.fingerprint;
  }

  function recheck(criterion) {
    state.givenUnder[criterion.id] = criterion.fingerprint;
    state.dirty = true;
    showChoices();
  }

  function recheckAll() {
    if (!state.view) { return; }
    state.view.criteria.filter(isOlder).forEach(recheck);
  }

  function cellButtons(criterion) {
    var row = el("div", "buttons");
    ["met", "unmet"].forEach(function (value) {
      var button = el("button", "choice " + value, value === "met" ? "Met" : "Unmet");
      button.type = "button";
      button.setAttribute("data-value", value);
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", function () {
        setCell(criterion, state.cells[criterion.id] === value ? null : value);
      });
      row.appendChild(button);
    });
    if (criterion.kind === "analytic") {
      var label = el("label", "score-label", "Score 0–10 ");
      var input = document.createElement("input");
      input.type = "number";
      input.min = "0";
      input.max = "10";
      input.step = "1";
      input.setAttribute("data-criterion", criterion.id);
      input.setAttribute("aria-label", criterion.id + " score from 0 to 10");
      input.addEventListener("input", function () { setScore(criterion, input.value); });
      label.appendChild(input);
      row.appendChild(label);
    }
    return row;
  }

  // -- choices -----------------------------------------------------------------------------
  function criterionOf(id) {
    return state.view.criteria.filter(function (c) { return c.id === id; })[0];
  }

  function scoreState(criterion, score) {
    return score / 10 >= criterion.min_score - 1e-9 ? "met" : "unmet";
  }

  function setCell(criterion, value) {
    if (value) { state.cells[criterion.id] = value; } else { delete state.cells[criterion.id]; }
    if (value) { state.givenUnder[criterion.id] = criterion.fingerprint; } else { delete state.givenUnder[criterion.id]; }
    var score = state.scores[criterion.id];
    if (score !== undefined && (!value || scoreState(criterion, score) !== value)) {
      delete state.scores[criterion.id];  // a score that says otherwise goes
    }
    state.dirty = true;
    showChoices();
  }

  function setScore(criterion, text) {
    var score = text === "" ? NaN : Number(text);
    if (isNaN(score)) {
      delete state.scores[criterion.id];
    } else {
      state.scores[criterion.id] = score;
      state.cells[criterion.id] = scoreState(criterion, score);
      state.givenUnder[criterion.id] = criterion.fingerprint;
    }
    state.dirty = true;
    showChoices(criterion.id);
  }

  function setVerdict(value) {
    state.verdict = state.verdict === value ? null : value;
    state.dirty = true;
    showChoices();
  }

  function cycle(index) {
    var criterion = state.view && state.view.criteria[index];
    if (!criterion) { return; }
    var now = state.cells[criterion.id];
    setCell(criterion, now === undefined ? "met" : now === "met" ? "unmet" : null);
  }

  function showChoices(typing) {
    $("verdict-pass").setAttribute("aria-pressed", String(state.verdict === "pass"));
    $("verdict-fail").setAttribute("aria-pressed", String(state.verdict === "fail"));
    Array.prototype.forEach.call(document.querySelectorAll("#criteria fieldset"), function (set) {
      var id = set.getAttribute("data-criterion");
      Array.prototype.forEach.call(set.querySelectorAll("button[data-value]"), function (button) {
        button.setAttribute("aria-pressed", String(state.cells[id] === button.getAttribute("data-value")));
      });
      var input = set.querySelector('input[type="number"]');
      if (input && id !== typing) {
        input.value = state.scores[id] === undefined ? "" : String(state.scores[id]);
      }
      var older = set.querySelector("[data-older]");
      if (older) { older.hidden = !isOlder(criterionOf(id)); }
    });
  }

  // -- saving ------------------------------------------------------------------------------
  function payload() {
    var criteria = {};
    var givenUnder = {};
    state.view.criteria.forEach(function (criterion) {
      if (state.scores[criterion.id] !== undefined) {
        criteria[criterion.id] = state.scores[criterion.id];
      } else if (state.cells[criterion.id]) {
        criteria[criterion.id] = state.cells[criterion.id];
      }
      if (criteria[criterion.id] !== undefined && state.givenUnder[criterion.id] !== undefined) {
        givenUnder[criterion.id] = state.givenUnder[criterion.id];
      }
    });
    var note = $("note").value;
    return { verdict: state.verdict, criteria: criteria, note: note.trim() ? note : null, given_under: givenUnder };
  }

  function save(thenNext) {
    if (!state.view || state.busy) { return Promise.resolve(false); }
    var id = state.view.id;
    state.busy = true;
    setStatus("saving", "Saving…");
    return api("PUT", sampleUrl("/api/labels/", id), payload()).then(function (answer) {
      state.dirty = false;
      state.busy = false;
      showProgress(answer.progress);
      var done = "Saved " + state.view.id_shown + ".";
      if (!thenNext) {
        setStatus("saved", done);
        return true;
      }
      return openNext(id).then(function (moved) {
        setStatus("saved", moved ? done : done + " " + nothingLeft());
        return true;
      });
    }).catch(function (error) {
      state.busy = false;
      showError(error);
      return false;
    });
  }

  // -- the lead's panel --------------------------------------------------------------------
  function renderLead(view) {
    var lead = view.lead;
    var attention = $("lead-attention");
    attention.hidden = !lead.attention;
    attention.textContent = lead.attention ? "Calls for a look: " + lead.attention + "." : "";
    var note = $("judge-note");
    note.hidden = !lead.judge_note;
    note.textContent = lead.judge_note || "";
    var wrap = $("lead-table");
    clear(wrap);
    var columns = lead.labels.map(function (entry) {
      return { title: entry.annotator + (entry.assigned ? "" : " (not assigned)"), label: entry.label };
    });
    columns.push({ title: "adjudicated (you)", label: lead.adjudicated });
    var table = el("table");
    var head = el("tr");
    head.appendChild(el("th", "", ""));
    columns.forEach(function (c) { head.appendChild(el("th", "", c.title)); });
    head.appendChild(el("th", "", "judge"));
    table.appendChild(head);
    table.appendChild(leadRow("verdict", columns, function (label) { return label && label.verdict; },
                              lead.judge ? { text: lead.judge.verdict } : null));
    view.criteria.forEach(function (criterion) {
      var cell = lead.judge && lead.judge.criteria[criterion.id];
      table.appendChild(leadRow(criterion.id, columns, function (label) {
        if (!label) { return null; }
        var score = label.criterion_scores && label.criterion_scores[criterion.id];
        var value = label.criteria[criterion.id];
        var older = label.older_wording && label.older_wording.indexOf(criterion.id) >= 0;
        return value ? value + (score !== undefined ? " (" + score + ")" : "") +
          (older ? " " + view.older_wording.mark : "") : null;
      }, cell ? judgeCell(cell) : null));
    });
    table.appendChild(leadRow("note", columns, function (label) { return label && label.note; }, null));
    wrap.appendChild(table);
  }

  function judgeCell(cell) {
    var text = cell.status + (cell.raw_score !== null && cell.raw_score !== undefined ? " (" + cell.raw_score + ")" : "");
    if (cell.tie) { text += " · tie"; }
    return { text: text, status: cell.status, rationale: cell.rationale || cell.error || "" };
  }

  function leadRow(title, columns, valueOf, judge) {
    var row = el("tr");
    row.appendChild(el("th", "", title));
    columns.forEach(function (c) {
      var value = valueOf(c.label);
      row.appendChild(el("td", value ? String(value).split(" ")[0] : "", value || "—"));
    });
    var cell = el("td", judge && (judge.status || judge.text) ? (judge.status || judge.text) : "", judge ? judge.text : "—");
    if (judge && judge.rationale) { cell.appendChild(el("div", "rationale", judge.rationale)); }
    row.appendChild(cell);
    return row;
  }

  // -- keys --------------------------------------------------------------------------------
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function toggleHelp() {
    var help = $("help");
    help.hidden = !help.hidden;
    $("help-toggle").setAttribute("aria-expanded", String(!help.hidden));
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); save(true); }
      return;
    }
    var target = event.target;
    if (event.key === "Escape") {
      if (typing(target)) { target.blur(); }
      if (!$("help").hidden) { toggleHelp(); }
      return;
    }
    if (typing(target)) {
      if (event.key === "Enter" && target.tagName === "INPUT") { event.preventDefault(); save(true); }
      return;
    }
    if (event.key === "Enter" && target && target.tagName === "BUTTON" && !target.classList.contains("choice")) {
      return;  // Save, Previous, Next, Keys: the button's own click (a pressed choice button does not swallow Enter)
    }
    var handled = true;
    switch (event.key) {
      case "p": setVerdict("pass"); break;
      case "f": setVerdict("fail"); break;
      case "Enter": save(true); break;
      case "j": case "ArrowRight": move(1); break;
      case "k": case "ArrowLeft": move(-1); break;
      case "n": $("note").focus(); break;
      case "r": recheckAll(); break;
      case "?": toggleHelp(); break;
      default:
        if (/^[1-9]$/.test(event.key)) { cycle(Number(event.key) - 1); } else { handled = false; }
    }
    if (handled) { event.preventDefault(); }
  }

  // -- start -------------------------------------------------------------------------------
  function hashId() {
    if (location.hash.length < 2) { return null; }
    try { return decodeURIComponent(location.hash.slice(1)); } catch (error) { return null; }
  }

  function start() {
    $("verdict-pass").addEventListener("click", function () { setVerdict("pass"); });
    $("verdict-fail").addEventListener("click", function () { setVerdict("fail"); });
    $("save").addEventListener("click", function () { save(true); });
    $("prev").addEventListener("click", function () { move(-1); });
    $("next").addEventListener("click", function () { move(1); });
    $("help-toggle").addEventListener("click", toggleHelp);
    $("note").addEventListener("input", function () { state.dirty = true; });
    document.addEventListener("keydown", onKey);
    window.addEventListener("hashchange", function () {
      var id = hashId();
      if (id && (!state.view || id !== state.view.id)) { open(id).catch(showError); }
    });
    var wanted = hashId();
    var first = wanted ? open(wanted).catch(function () { return openNext(null); }) : openNext(null);
    first.then(function (moved) {
      if (moved === false) { setStatus("idle", nothingLeft()); }
    }).catch(showError);
    refreshProgress();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
