(() => {
  "use strict";
  performance.mark("conformance-script");
  // The page's only script (allowed by its hash in the CSP). It filters the records table,
  // counts the matrix, lists items and opens details. Strings from records are written with
  // textContent, never as markup; a detail is HTML that jinja2 rendered (and escaped) before.
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const F = Object.fromEntries(data.fields.map((name, i) => [name, i]));
  const records = data.records;
  const PAGE = 200;
  const SKIPPED = data.outcomes.indexOf("skipped");
  const state = { cell: null, limit: PAGE };
  const $ = (id) => document.getElementById(id);
  const form = $("filter-form");

  function el(tag, props, text) {
    const node = document.createElement(tag);
    if (props) {
      for (const [key, value] of Object.entries(props)) {
        if (key === "dataset") Object.assign(node.dataset, value);
        else if (key === "className") node.className = value;
        else node.setAttribute(key, value);
      }
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function checkedSet(name) {
    const out = new Set();
    for (const box of form.querySelectorAll(`input[name="${name}"]`)) {
      if (box.checked) out.add(Number(box.value));
    }
    return out;
  }

  function nodeid(r) {
    const file = data.files[r[F.file]];
    return file ? `${file}::${r[F.name]}` : r[F.name];
  }

  function selected() {
    const fw = checkedSet("framework"), dt = checkedSet("dtype");
    const dv = checkedSet("device"), oc = checkedSet("outcome");
    const text = $("search").value.trim().toLowerCase();
    return records.filter((r) =>
      fw.has(r[F.framework]) && dt.has(r[F.dtype]) && dv.has(r[F.device]) &&
      oc.has(r[F.outcome]) &&
      (!text || r[F.case].toLowerCase().includes(text) || r[F.name].toLowerCase().includes(text)));
  }

  // family|framework → "parametrization: reason" lines: what a framework does not offer (the
  // run header's not_offered), which has no records.
  const notOffered = new Map();
  for (const [fam, fw, par, reason] of data.not_offered || []) {
    const key = `${fam}|${fw}`;
    if (!notOffered.has(key)) notOffered.set(key, []);
    notOffered.get(key).push(`${par}: ${reason}`);
  }

  function renderMatrix(rows) {
    const nOut = data.outcomes.length;
    const counts = new Map();
    const families = new Set();
    const columns = new Set();
    for (const r of rows) {
      const col = r[F.framework] * 100000 + r[F.check];
      const key = `${r[F.family]}|${col}`;
      let c = counts.get(key);
      if (!c) counts.set(key, (c = new Array(nOut).fill(0)));
      c[r[F.outcome]] += 1;
      families.add(r[F.family]);
      columns.add(col);
    }
    const shownFrameworks = new Set([...columns].map((col) => Math.floor(col / 100000)));
    for (const key of notOffered.keys()) {
      const [fam, fw] = key.split("|").map(Number);
      if (shownFrameworks.has(fw)) families.add(fam);
    }
    const cols = [...columns].sort((a, b) => a - b);
    const fams = [...families].sort((a, b) => data.families[a].localeCompare(data.families[b]));
    const table = $("matrix");
    table.replaceChildren();
    $("matrix-empty").hidden = rows.length > 0;
    if (!rows.length) return;
    const head = el("thead");
    const top = el("tr", { className: "frameworks" });
    const sub = el("tr", { className: "checks" });
    top.append(el("th", { rowspan: "2" }, "family"));
    let i = 0;
    while (i < cols.length) {
      const fw = Math.floor(cols[i] / 100000);
      let j = i;
      while (j < cols.length && Math.floor(cols[j] / 100000) === fw) {
        sub.append(el("th", null, data.checks[cols[j] % 100000]));
        j += 1;
      }
      top.append(el("th", { colspan: String(j - i) }, data.frameworks[fw]));
      i = j;
    }
    head.append(top, sub);
    const body = el("tbody");
    for (const fam of fams) {
      const tr = el("tr");
      tr.append(el("th", { scope: "row" }, data.families[fam]));
      for (let k = 0; k < cols.length; k += 1) {
        const col = cols[k];
        const c = counts.get(`${fam}|${col}`);
        const fw = Math.floor(col / 100000), check = col % 100000;
        const lacks = notOffered.get(`${fam}|${fw}`);
        const first = k === 0 || Math.floor(cols[k - 1] / 100000) !== fw;
        if (lacks && first) {
          // A framework with no item of the family: one cell over its checks says why.
          let span = k;
          while (span < cols.length && Math.floor(cols[span] / 100000) === fw &&
                 !counts.has(`${fam}|${cols[span]}`)) span += 1;
          const last = span === cols.length || Math.floor(cols[span] / 100000) !== fw;
          if (last) {
            tr.append(el("td", {
              className: "not-offered", colspan: String(span - k),
              dataset: { family: data.families[fam], framework: data.frameworks[fw] },
              title: lacks.join("\n"),
            }, "not offered"));
            k = span - 1;
            continue;
          }
        }
        if (!c) {
          tr.append(el("td", { className: "cell empty" }));
          continue;
        }
        // Outcomes are ordered worst first; a skip colours a cell only if nothing else ran.
        let worst = c.findIndex((n, k) => n > 0 && k !== SKIPPED);
        if (worst < 0) worst = SKIPPED;
        const td = el("td", {
          className: `cell w-${data.outcomes[worst]}`,
          dataset: {
            family: data.families[fam], framework: data.frameworks[fw], check: data.checks[check],
            fam: String(fam), fw: String(fw), chk: String(check),
          },
          title: c.map((n, k) => (n ? `${data.outcomes[k]} ${n}` : "")).filter(Boolean).join(", ") +
            (lacks ? `\nnot offered: ${lacks.join("; ")}` : ""),
        });
        if (state.cell && state.cell.fam === fam && state.cell.fw === fw && state.cell.chk === check) {
          td.classList.add("selected");
        }
        c.forEach((n, k) => {
          if (n) td.append(el("span", { className: `n o-${data.outcomes[k]}`, dataset: { outcome: data.outcomes[k] } }, n));
        });
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(head, body);
  }

  function ratioText(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    return String(Number(value.toPrecision(3)));
  }

  function renderList(rows) {
    let list = rows;
    const cell = state.cell;
    if (cell) {
      list = rows.filter((r) => r[F.family] === cell.fam && r[F.framework] === cell.fw && r[F.check] === cell.chk);
      $("cell-filter-text").textContent =
        `Showing ${data.families[cell.fam]} / ${data.frameworks[cell.fw]} / ${data.checks[cell.chk]} only.`;
    }
    $("cell-filter").hidden = !cell;
    list = list.slice().sort((a, b) => a[F.outcome] - b[F.outcome]);
    const shown = list.slice(0, state.limit);
    const body = $("items").tBodies[0];
    body.replaceChildren();
    for (const r of shown) {
      const outcome = data.outcomes[r[F.outcome]];
      const tr = el("tr", { className: `item o-${outcome}` });
      if (r[F.detail] >= 0) {
        tr.classList.add("has-detail");
        tr.dataset.detail = String(r[F.detail]);
        tr.setAttribute("tabindex", "0");
        tr.setAttribute("aria-expanded", "false");
      }
      const badge = el("td");
      badge.append(el("span", { className: `badge o-${outcome}` }, outcome));
      const kind = data.kinds[r[F.kind]];
      tr.append(
        badge,
        el("td", { className: "nodeid" }, nodeid(r)),
        el("td", null, kind === "(none)" ? "" : kind),
        el("td", { className: "num" }, ratioText(r[F.ratio])),
        el("td", { className: "summary" }, r[F.summary]),
      );
      body.append(tr);
    }
    $("item-count").textContent = shown.length < list.length
      ? `(${shown.length} of ${list.length} shown)` : `(${list.length})`;
    const more = $("more");
    more.hidden = shown.length >= list.length;
    more.textContent = `Show ${Math.min(PAGE, list.length - shown.length)} more`;
  }

  function render() {
    const rows = selected();
    renderMatrix(rows);
    renderList(rows);
  }

  function toggleDetail(tr) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail-row")) {
      next.remove();
      tr.setAttribute("aria-expanded", "false");
      return;
    }
    const holder = $(`detail-${tr.dataset.detail}`);
    if (!holder) return;
    const row = el("tr", { className: "detail-row" });
    const td = el("td", { colspan: "5" });
    // Server-rendered by jinja2 with autoescape: markup of ours, every string escaped.
    td.innerHTML = holder.textContent;
    row.append(td);
    tr.after(row);
    tr.setAttribute("aria-expanded", "true");
  }

  function copyReproducer(button) {
    const pre = button.closest(".repro").querySelector("pre");
    const done = (ok) => {
      button.textContent = ok ? "Copied" : "Selected: press Ctrl+C";
      setTimeout(() => { button.textContent = "Copy"; }, 2000);
    };
    const fallback = () => {
      const range = document.createRange();
      range.selectNodeContents(pre);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
      done(ok);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(pre.textContent).then(() => done(true), fallback);
    } else {
      fallback();
    }
  }

  form.addEventListener("change", (event) => {
    if (event.target.id === "search") return; // typed text is handled on input; blur is no change
    state.limit = PAGE;
    render();
  });
  $("search").addEventListener("input", () => { state.limit = PAGE; render(); });
  form.addEventListener("reset", () => {
    state.cell = null;
    state.limit = PAGE;
    setTimeout(render, 0); // after the browser has reset the inputs
  });
  $("matrix").addEventListener("click", (event) => {
    const td = event.target.closest("td.cell");
    if (!td || td.classList.contains("empty")) return;
    const cell = { fam: Number(td.dataset.fam), fw: Number(td.dataset.fw), chk: Number(td.dataset.chk) };
    const same = state.cell && state.cell.fam === cell.fam && state.cell.fw === cell.fw && state.cell.chk === cell.chk;
    state.cell = same ? null : cell;
    state.limit = PAGE;
    render();
    if (state.cell) $("items-section").scrollIntoView({ block: "start" });
  });
  $("cell-clear").addEventListener("click", () => { state.cell = null; render(); });
  $("more").addEventListener("click", () => { state.limit += PAGE; render(); });
  $("items").addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (button) { copyReproducer(button); return; }
    if (event.target.closest("tr.detail-row")) return;
    const tr = event.target.closest("tr.item.has-detail");
    if (tr) toggleDetail(tr);
  });
  $("items").addEventListener("keydown", (event) => {
    const tr = event.target.closest && event.target.closest("tr.item.has-detail");
    if (tr && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      toggleDetail(tr);
    }
  });

  performance.mark("conformance-parsed");
  render();
  performance.mark("conformance-rendered");
  document.body.dataset.rendered = "1";
})();
