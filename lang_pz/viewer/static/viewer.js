/* lang_pz run viewer: draws data/view.js (written by `lang-pz view`) with plain DOM and inline SVG.
   Episodes are loaded on demand from data/episodes/ID.js with a <script> tag (works from file://). */
"use strict";
const LPZ = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const episodes = {}, waiting = {};
  let view = null;

  // -- small helpers ---------------------------------------------------------------------------
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null) continue;
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids.flat()) if (kid != null) e.append(kid);
    return e;
  }
  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
    for (const kid of kids.flat()) if (kid != null) e.append(kid);
    return e;
  }
  const num = (x, d = 2) => (x == null || Number.isNaN(x)) ? "-" : (Math.abs(x) >= 1000 ? x.toFixed(0) : x.toFixed(d));
  const main = () => document.getElementById("main");
  const text = x => typeof x === "string" ? x : JSON.stringify(x);
  function table(head, rows, cls) {
    return el("table", {class: "data " + (cls || "")},
      el("thead", {}, el("tr", {}, head.map(h => el("th", {text: h})))),
      el("tbody", {}, rows));
  }
  const td = (v, cls) => el("td", {class: cls, text: v == null ? "-" : String(v)});
  const tdn = (v, d) => el("td", {class: "num", text: typeof v === "number" ? num(v, d) : (v == null ? "-" : String(v))});
  function diffNode(ops) {
    const span = el("span", {class: "policy"});
    ops.forEach(([op, words], i) => {
      if (i) span.append(" ");
      span.append(op === "=" ? words : el(op === "+" ? "ins" : "del", {text: words}));
    });
    return span;
  }

  // -- a line/point chart in SVG ----------------------------------------------------------------
  function chart(series, opts) {
    const W = opts.width || 720, H = opts.height || 300, L = 56, R = 12, T = 14, B = 34;
    const pts = series.flatMap(s => s.points);
    const svg = sv("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: opts.id, role: "img"});
    if (!pts.length) {
      svg.append(sv("text", {x: W / 2, y: H / 2, "text-anchor": "middle"}, opts.empty || "nothing to draw yet"));
      return svg;
    }
    const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = opts.y || [Math.min(...ys), Math.max(...ys)];
    if (x0 === x1) { x0 -= 0.5; x1 += 0.5; }
    if (y0 === y1) { y0 -= 1; y1 += 1; }
    const pad = opts.y ? 0 : (y1 - y0) * 0.08; y0 -= pad; y1 += pad;
    const X = x => L + (x - x0) / (x1 - x0) * (W - L - R), Y = y => T + (y1 - y) / (y1 - y0) * (H - T - B);
    const grid = sv("g", {class: "grid"}), axis = sv("g", {class: "axis"});
    for (let i = 0; i <= 4; i++) {
      const y = y0 + (y1 - y0) * i / 4;
      grid.append(sv("line", {x1: L, x2: W - R, y1: Y(y), y2: Y(y)}));
      axis.append(sv("text", {x: L - 6, y: Y(y) + 4, "text-anchor": "end"}, num(y, opts.y ? 2 : 1)));
    }
    for (const [x, label] of opts.xticks) axis.append(sv("text", {x: X(x), y: H - B + 16, "text-anchor": "middle"}, label));
    axis.append(sv("line", {x1: L, x2: W - R, y1: H - B, y2: H - B}), sv("line", {x1: L, x2: L, y1: T, y2: H - B}));
    axis.append(sv("text", {x: L + (W - L - R) / 2, y: H - 4, "text-anchor": "middle"}, opts.xlabel || ""));
    svg.append(grid, axis);
    for (const s of series) {
      const g = sv("g", {class: "series-" + s.name});
      if (s.line && s.points.length > 1)
        g.append(sv("polyline", {points: s.points.map(p => `${X(p[0])},${Y(p[1])}`).join(" "), fill: "none",
                                 stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash}));
      for (const p of s.points) {
        const title = sv("title", {}, `${s.label}: ${num(p[1], 3)} (x=${p[0]})${p[2] ? " " + p[2] : ""}`);
        const [cx, cy] = [X(p[0]), Y(p[1])];
        if (s.marker === "x")
          g.append(sv("path", {d: `M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx - 5},${cy + 5}L${cx + 5},${cy - 5}`,
                               stroke: s.color, "stroke-width": 2.5, class: "pt"}, title));
        else if (s.marker === "^")
          g.append(sv("path", {d: `M${cx},${cy - 7}L${cx + 6},${cy + 5}L${cx - 6},${cy + 5}Z`, fill: s.color, class: "pt"}, title));
        else g.append(sv("circle", {cx, cy, r: s.r || 4, fill: s.color, "fill-opacity": s.opacity || 1, class: "pt"}, title));
      }
      svg.append(g);
    }
    return svg;
  }
  const legend = series => el("p", {class: "legend"}, series.filter(s => s.points.length).map(s =>
    el("span", {}, el("span", {class: "swatch", style: `background:${s.color}`}), s.label)));

  // -- a training run -------------------------------------------------------------------------
  const done = () => view.iterations.filter(r => r.metrics);
  function curveView() {
    const it = done(), n = it.length, final = view.final.test_mean;
    const test = it.filter(r => r.metrics.test_return != null).map(r => [r.iteration, r.metrics.test_return]);
    if (test.length && final != null) test.push([n, final, "final policies"]);
    const cand = ok => it.filter(r => r.metrics.accepted === ok).map(r => [r.iteration,
      r.metrics.candidate_val_return ?? r.metrics.train_return, "changed: " + (r.metrics.changed_agents || []).join(", ")]);
    const series = [
      {name: "train", label: "training episodes (new seeds each iteration)", color: "#4c72b0", opacity: 0.3, r: 3,
       points: it.flatMap(r => (r.metrics.train_returns || []).map(v => [r.iteration, v]))},
      {name: "train-mean", label: "training return (mean)", color: "#4c72b0", line: !test.length, r: 3,
       points: test.length ? [] : it.map(r => [r.iteration, r.metrics.train_return])},
      {name: "validation", label: "validation (current policies)", color: "#dd8452", line: true, dash: "5 4",
       points: it.filter(r => r.metrics.val_return != null).map(r => [r.iteration, r.metrics.val_return])},
      {name: "test", label: "held-out test (same seeds every iteration)", color: "#8172b3", line: true, r: 5, points: test},
      {name: "accepted", label: "candidate accepted (its validation)", color: "#1a7f37", marker: "^", points: cand(true)},
      {name: "rejected", label: "candidate rejected (its validation)", color: "#c0392b", marker: "x", points: cand(false)},
    ];
    const ticks = it.map(r => [r.iteration, String(r.iteration)]);
    if (test.length && final != null) ticks.push([n, "final"]);
    const out = [el("h2", {text: "Learning curve"}),
      chart(series, {id: "curve-chart", xticks: ticks, xlabel: "iteration", empty: "no completed iteration yet"}), legend(series)];
    out.push(...rolesView());
    const running = view.iterations.filter(r => !r.metrics).map(r => r.iteration);
    if (running.length) out.push(el("p", {class: "note", text: `iteration ${running.join(", ")} in progress (no done.json yet)`}));
    out.push(el("h2", {text: "Iterations: returns, verdicts, LLM calls, tokens and cost per role"}), usageTable());
    return out;
  }
  function rolesView() {  // lang_pz.differentiation: how far the agents came apart, per iteration
    const rows = (view.differentiation || []).filter(r => r.iteration != null && r.agents > 1);
    if (!rows.length) return [];
    const pts = k => rows.filter(r => r[k] != null).map(r => [r.iteration, r[k]]);
    const series = [
      {name: "policy-divergence", label: "policy text: mean pairwise Jaccard distance of word sets", color: "#4c72b0",
       line: true, points: pts("policy_divergence")},
      {name: "action-divergence", label: "played actions: mean pairwise Jensen-Shannon divergence (bits)", color: "#c44e52",
       line: true, dash: "5 4", points: pts("action_divergence")},
    ];
    const end = (view.differentiation || []).find(r => r.iteration == null);
    const first = rows[0];
    const note = (first.iteration === 0 && first.policy_divergence != null
      ? `The agents started from policies with ${first.policy_divergence === 0 ? "the same" : "different"} words. ` : "")
      + (end && end.policy_divergence != null ? `Final policies: ${num(end.policy_divergence)}. ` : "")
      + "0 = alike, 1 = nothing shared; actions count only agents offered a common finite set of action words.";
    return [el("h2", {text: "Role differentiation: how far the agents came apart"}),
      chart(series, {id: "roles-chart", height: 180, y: [0, 1], xticks: rows.map(r => [r.iteration, String(r.iteration)]),
                     xlabel: "iteration", empty: "no two agents yet"}),
      legend(series), el("p", {class: "note", text: note})];
  }
  function usageTable() {
    const roles = [...new Set(view.iterations.flatMap(r => Object.keys(r.usage || {})))];
    const head = ["iter", "test", "train", "val", "cand. val", "update", "changed", "seconds"];
    for (const r of roles) head.push(`${r} calls (cached)`, `${r} tokens in/out`, `${r} $`);
    const tot = {};
    const rows = view.iterations.map(rec => {
      const m = rec.metrics || {};
      const verdict = m.accepted == null ? (rec.metrics ? "none" : "running") : (m.accepted ? "accepted" : "rejected");
      const cells = [td(rec.iteration), tdn(m.test_return), tdn(m.train_return), tdn(m.val_return),
        tdn(m.candidate_val_return), el("td", {}, el("span", {class: "tag " + verdict, text: verdict})),
        td((m.changed_agents || []).join(", ") || "-"), tdn(m.seconds, 1)];
      for (const r of roles) {
        const u = (rec.usage || {})[r] || {};
        const t = tot[r] = tot[r] || {calls: 0, cached_calls: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0};
        for (const k of Object.keys(t)) t[k] += u[k] || 0;
        cells.push(td(`${u.calls || 0} (${u.cached_calls || 0})`, "num"),
                   td(`${u.prompt_tokens || 0} / ${u.completion_tokens || 0}`, "num"), tdn(u.cost_usd, 4));
      }
      return el("tr", {}, cells);
    });
    const total = [td("total"), td(""), td(""), td(""), td(""), td(""), td(""),
                   tdn(done().reduce((a, r) => a + (r.metrics.seconds || 0), 0), 1)];
    for (const r of roles) total.push(td(`${tot[r].calls} (${tot[r].cached_calls})`, "num"),
      td(`${tot[r].prompt_tokens} / ${tot[r].completion_tokens}`, "num"), tdn(tot[r].cost_usd, 4));
    rows.push(el("tr", {}, total));
    return table(head, rows, "usage");
  }

  function verdictOf(rec, agent) {
    const m = rec.metrics;
    if (!m) return ["pending", "in progress"];
    if ((m.accepted_agents || []).includes(agent)) return ["accepted", "accepted"];
    if ((m.changed_agents || []).includes(agent)) return ["rejected", "rejected"];
    if ((m.gated_agents || []).includes(agent)) return ["gated", "no edit: no re-run beat its play"];
    return ["", "no candidate"];
  }
  function agentsView(agent) {
    const agents = view.agents;
    agent = agents.includes(agent) ? agent : agents[0];
    const out = [el("h2", {text: "Agents: policy text per iteration (word diff), credit, verdict"}),
      el("div", {class: "agents"}, agents.map(a => el("button", {class: a === agent ? "on" : "", "data-agent": a, text: a,
        onclick: () => { location.hash = "agents/" + a; }})))];
    if (!agent) return out.concat(el("p", {class: "note", text: "no policies written yet"}));
    const credit = {name: "credit", label: `mean credit of ${agent} (critic)`, color: "#4c72b0", line: true,
      points: view.iterations.filter(r => r.credits[agent]).map(r => [r.iteration, r.credits[agent].mean])};
    out.push(chart([credit], {id: "credit-chart", height: 180, xticks: view.iterations.map(r => [r.iteration, String(r.iteration)]),
                              xlabel: "iteration", empty: "no credit yet"}));
    const rows = view.iterations.map(rec => {
      const [cls, label] = verdictOf(rec, agent);
      const pol = rec.diff[agent] ? diffNode(rec.diff[agent]) : el("span", {class: "policy", text: rec.policies[agent] ?? "-"});
      const cand = rec.candidate_diff[agent] ? diffNode(rec.candidate_diff[agent]) : el("span", {class: "note", text: "-"});
      const c = rec.credits[agent];
      const why = c ? c.episodes.map(e => el("div", {}, `ep ${e.episode}: ${num(e.credit)} ${e.explanation}` +
        (e.steps && e.steps.length ? ` (steps ${e.steps.join(", ")})` : ""))) : "-";
      return el("tr", {"data-iteration": rec.iteration}, td(rec.iteration), el("td", {}, pol), tdn(c ? c.mean : null),
        el("td", {class: "note"}, why), el("td", {}, cand), el("td", {}, el("span", {class: "tag " + cls, text: label})));
    });
    if (view.final.policies[agent] != null) rows.push(el("tr", {}, td("final"),
      el("td", {}, el("span", {class: "policy", text: view.final.policies[agent]})), td(""), td(""), td(""), td("")));
    out.push(table(["iter", "policy (diff to the previous iteration)", "credit", "critic's reasons", "candidate (diff)", "verdict"],
                   rows, "agent-table"));
    return out;
  }

  function skillsView() {
    const out = [el("h2", {text: "Skill library per iteration"})];
    let before = {};
    for (const rec of view.iterations.concat([{iteration: "final", skills: view.final.skills, skill_edits: []}])) {
      const lib = rec.skills;
      if (!lib) continue;
      out.push(el("h3", {text: `iteration ${rec.iteration}: library version ${lib.version ?? "?"}`}));
      if (lib.error) { out.push(el("p", {class: "error", text: lib.error})); continue; }
      const mem = (rec.skill_memory && rec.skill_memory.skills) || {};
      out.push(table(["skill", "version", "description", "body (diff to the previous iteration)", "invoked / offered",
                      "measured utility (withheld re-runs)", "critic's verdicts"],
        Object.entries(lib.skills || {}).map(([name, s]) => {
          const old = before[name], m = mem[name];
          const body = old && old.body !== s.body ? diffNode(wordDiff(old.body, s.body)) : el("span", {class: "policy", text: s.body});
          return el("tr", {"data-skill": name}, td(name), td(s.version), td(s.description), el("td", {}, body),
            td(m ? `${m.invoked} / ${m.offered}` : "-", "num"),
            td(m && m.measured_n ? `${num(m.measured_sum / m.measured_n, 1)} (${m.measured_n} re-run(s))` : "not measured"),
            td(m ? Object.entries(m.contributions || {}).map(([k, n]) => `${k} ${n}`).join(", ") || "-" : "-"));
        }), "skills"));
      before = lib.skills || {};
      if ((rec.skill_edits || []).length)
        out.push(table(["event", "edit", "why / verdict", "validation: current -> with the edit"], rec.skill_edits.map(e =>
          el("tr", {class: "edit-" + e.event}, td(e.event), td(e.label), td(e.reason || e.note || ""),
             td(e.val_return == null ? "-" : `${num(e.val_return, 1)} -> ${num(e.candidate_val_return, 1)}`))), "skill-edits"));
    }
    return out.length > 1 ? out : out.concat(el("p", {class: "note", text: "no skill library written yet"}));
  }
  function wordDiff(a, b) {  // longest common subsequence on words (skill bodies are short)
    const x = a.split(/\s+/).filter(Boolean), y = b.split(/\s+/).filter(Boolean);
    const L = Array.from({length: x.length + 1}, () => new Int32Array(y.length + 1));
    for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--)
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    const ops = [], push = (op, w) => { const last = ops[ops.length - 1];
      if (last && last[0] === op) last[1] += " " + w; else ops.push([op, w]); };
    let i = 0, j = 0;
    while (i < x.length && j < y.length) {
      if (x[i] === y[j]) { push("=", x[i]); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) push("-", x[i++]); else push("+", y[j++]);
    }
    while (i < x.length) push("-", x[i++]);
    while (j < y.length) push("+", y[j++]);
    return ops;
  }

  // -- episodes ---------------------------------------------------------------------------------
  function loadEpisode(id, then) {
    if (episodes[id]) return then(episodes[id]);
    (waiting[id] = waiting[id] || []).push(then);
    if (waiting[id].length > 1) return;
    const s = el("script", {src: "data/episodes/" + encodeURIComponent(id) + ".js"});
    s.onerror = () => { delete waiting[id]; main().append(el("p", {class: "error", text: `could not load data/episodes/${id}.js`})); };
    document.body.append(s);
  }
  function episodesView(id) {
    const eps = view.episodes;
    const out = [el("h2", {text: `Episodes (${eps.length}; each loads when opened)`})];
    const label = e => e.set !== "validation" ? "" :
      ((view.iterations[e.iteration] || {validation: []}).validation.find(v => v.episode === e.episode) || {}).policies || "";
    const list = table(["episode", "iteration", "set", "policies", "seed", "team return", "decisions", "finished"], eps.map(e =>
      el("tr", {class: "clickable" + (e.id === id ? " sel" : ""), "data-episode": e.id, onclick: () => { location.hash = "episodes/" + e.id; }},
        td(e.id), td(e.iteration), td(e.set), td(label(e)), td(e.seed), tdn(e.team_return, 1), td(e.decisions), td(e.finished ? "yes" : "running"))),
      "episode-list");
    const holder = el("div", {id: "episode"});
    out.push(el("div", {class: "row"}, el("div", {style: "max-height:260px;overflow:auto"}, list)), holder);
    if (id) { holder.append(el("p", {class: "note", text: "loading " + id})); loadEpisode(id, ep => drawEpisode(holder, ep)); }
    else if (!eps.length) holder.append(el("p", {class: "note", text: "no episode written yet"}));
    else holder.append(el("p", {class: "note", text: "click an episode to see its step x agent grid"}));
    return out;
  }
  function drawEpisode(holder, ep) {
    holder.replaceChildren();
    const byAgent = {};
    for (const s of ep.steps) (byAgent[s.agent] = byAgent[s.agent] || []).push(s);
    const steps = [...new Set(ep.steps.map(s => s.step))].sort((a, b) => a - b);
    const cell = {}; for (const s of ep.steps) cell[s.agent + "|" + s.step] = s;
    const cited = new Set(Object.entries(ep.credits || {}).flatMap(([a, c]) => (c.steps || []).map(t => a + "|" + t)));
    const maxR = Math.max(1e-9, ...ep.steps.map(s => Math.abs(s.reward)));
    holder.append(el("h3", {text: `${ep.id}: seed ${ep.seed ?? "?"}, team return ${num(ep.team_return, 2)}` + (ep.finished ? "" : " (unfinished)")}));
    holder.append(el("p", {}, "returns: " + Object.entries(ep.returns || {}).map(([a, r]) => `${a} ${num(r, 2)}`).join(", ")));
    const grid = el("table", {class: "grid", id: "grid"});
    grid.append(el("thead", {}, el("tr", {}, el("th", {class: "agent", text: "agent \\ step"}), steps.map(t => el("th", {text: t})))));
    const body = el("tbody", {});
    const agents = ep.agents.length ? ep.agents : Object.keys(byAgent);
    for (const a of agents) {
      const tr = el("tr", {}, el("th", {class: "agent", text: a}));
      for (const t of steps) {
        const s = cell[a + "|" + t];
        if (!s) { tr.append(el("td", {class: "empty"})); continue; }
        const v = s.reward / maxR, col = v >= 0 ? `rgba(26,127,55,${0.12 + 0.6 * v})` : `rgba(192,57,43,${0.12 - 0.6 * v})`;
        const cls = [s.parse_error != null ? "pe" : "", cited.has(a + "|" + t) ? "cited" : ""].join(" ").trim();
        tr.append(el("td", {class: cls, style: `background-color:${col}`, "data-agent": a, "data-step": t,
          title: `${a} step ${t}: reward ${num(s.reward, 3)}, action ${text(s.action)}` + (s.parse_error != null ? ` (fallback: ${s.parse_error})` : ""),
          onclick: ev => showCell(ep, s, ev.currentTarget)}, cellText(s)));
      }
      body.append(tr);
    }
    grid.append(body);
    holder.append(el("p", {class: "legend"}, el("span", {}, el("span", {class: "swatch", style: "background:rgba(26,127,55,.6)"}), "reward > 0"),
      el("span", {}, el("span", {class: "swatch", style: "background:rgba(192,57,43,.6)"}), "reward < 0"),
      el("span", {}, el("span", {class: "swatch", style: "box-shadow:inset 0 0 0 2px #c0392b"}), "parse failure (fallback action)"),
      el("span", {}, el("span", {class: "swatch", style: "outline:2px solid #111"}), "step the critic cited"),
      el("span", {}, el("span", {class: "swatch", style: "background-image:repeating-linear-gradient(45deg,rgba(59,91,165,.55) 0 3px,transparent 3px 6px)"}),
        "replaced in the selected re-run"), el("span", {}, "cell text: the action played")));
    holder.append(el("div", {class: "gridwrap"}, grid), el("div", {class: "detail", id: "cell-detail"}, el("p", {class: "note", text: "click a cell"})));
    holder.append(counterfactuals(ep, byAgent, grid), credits(ep));
  }
  function cellText(s) {  // the action word when the reply was one of the offered words, "!" for a fallback
    if (s.parse_error != null) return "!";
    const word = (s.raw_output || "").trim();
    return (s.legal_actions && s.legal_actions.includes(word) ? word : text(s.action)).slice(0, 2);
  }
  function showCell(ep, s, td0) {
    document.querySelectorAll("#grid td.selcell").forEach(c => c.classList.remove("selcell"));
    td0.classList.add("selcell");
    const kv = (k, v) => el("tr", {}, el("td", {text: k}), el("td", {}, v));
    const state = (ep.states || {})[String(s.step)];
    document.getElementById("cell-detail").replaceChildren(
      el("h3", {text: `${s.agent}, step ${s.step}`}),
      el("table", {class: "kv"}, kv("reward", num(s.reward, 4)), kv("action played", el("code", {id: "cell-action", text: text(s.action)})),
        kv("parse failure", s.parse_error == null ? "none" : el("span", {class: "error", text: s.parse_error + " (the fallback action was played)"})),
        kv("offered actions", s.legal_actions ? s.legal_actions.join(", ") : "free text / continuous"),
        kv("tokens", `${s.prompt_tokens} prompt, ${s.completion_tokens} completion`),
        Object.keys(s.meta || {}).length ? kv("meta", text(s.meta)) : null),
      el("b", {text: "observation"}), el("pre", {id: "cell-observation", text: s.observation}),
      el("b", {text: "raw reply"}), el("pre", {id: "cell-raw", text: s.raw_output}),
      ...(state ? [el("b", {text: "global state (critic only)"}), el("pre", {text: state})] : []));
  }
  function counterfactuals(ep, byAgent, grid) {
    const cfs = ep.counterfactuals || [];
    if (!cfs.length) return el("p", {class: "note", text: ep.set === "train" ? "no counterfactual re-runs of this episode" : ""});
    const isSkill = cfs[0].skill != null;
    const factual = isSkill ? cfs[0].factual : cfs[0].value - cfs[0].delta;
    const mark = c => {
      grid.querySelectorAll("td.cf").forEach(x => x.classList.remove("cf"));
      const agents = c.agents || (c.agent ? [c.agent] : []);
      for (const a of agents) {
        const mine = byAgent[a] || [];
        const picked = isSkill ? mine.filter(s => (c.steps || []).includes(s.step))
          : (c.at_steps == null ? mine : c.at_steps.map(k => mine[k]).filter(Boolean));
        for (const s of picked) { const x = grid.querySelector(`td[data-agent="${CSS.escape(a)}"][data-step="${s.step}"]`); if (x) x.classList.add("cf"); }
      }
    };
    const rows = [el("tr", {class: "factual"}, td("factual episode"), td("-"), td("-"), tdn(factual, 2), td("-"))];
    cfs.forEach((c, i) => {
      const tr = el("tr", {class: "clickable", "data-rerun": i, onclick: () => {
        rows.forEach(r => r.classList.remove("sel")); tr.classList.add("sel"); mark(c); }},
        isSkill ? [td(`${c.agent} without ${c.skill}`), td(`v${c.version}`), td((c.steps || []).join(", ")), tdn(c.withheld, 2), tdn(-c.utility, 2)]
                : [td((c.agents || []).join(", ")), td(c.replacement), td(c.at_steps == null ? "every decision" : "decisions " + c.at_steps.join(", ")),
                   tdn(c.value, 2), tdn(c.delta, 2)]);
      rows.push(tr);
    });
    return el("div", {}, el("h3", {text: "Counterfactual re-runs of this episode (click one to mark the cells it replaced)"}),
      table(isSkill ? ["re-run", "skill version", "steps", "objective", "minus factual"] : ["agents replaced", "played instead", "where", "objective", "minus factual"],
            rows, "reruns"));
  }
  function credits(ep) {
    const c = Object.entries(ep.credits || {});
    if (!c.length) return el("span");
    return el("div", {}, el("h3", {text: `Critic's credit (${ep.critic_mode || "?"})`}), table(["agent", "credit", "explanation", "cited steps"],
      c.map(([a, x]) => el("tr", {}, td(a), tdn(x.credit, 2), td(x.explanation), td((x.steps || []).join(", ")))), "credits"));
  }

  // -- bench and eval-critic --------------------------------------------------------------------
  function benchView() {
    const out = [el("h2", {text: "Results: mean and 95 % bootstrap interval per team"})];
    if (!view.complete) out.push(el("p", {class: "note", text: "summary.json is missing or older than episodes.jsonl: rows computed from the episodes so far"}));
    out.push(table(["env", "team", "objective", "mean", "95 % CI", "parse failures", "episodes", "LLM calls (cached)", "tokens in/out", "cost $", "seconds"],
      view.rows.map(r => el("tr", {}, td(r.env), td(r.team), td(r.objective), tdn(r.mean), td(r.ci_low == null ? "-" : `[${num(r.ci_low)}, ${num(r.ci_high)}]`),
        td(r.parse_failures == null ? "-" : `${num(100 * r.parse_failures)} %`), td(r.episodes), td(`${r.llm_calls} (${r.cached_calls})`), td(`${r.prompt_tokens} / ${r.completion_tokens}`), tdn(r.cost_usd, 4), tdn(r.seconds, 1))), "bench"));
    for (const env of [...new Set(view.rows.map(r => r.env))]) out.push(el("h3", {text: env}), benchPlot(env));
    return out;
  }
  function benchPlot(env) {
    const rows = view.rows.filter(r => r.env === env), eps = view.episodes.filter(e => e.env === env);
    const vals = rows.flatMap(r => [r.mean, r.ci_low, r.ci_high]).concat(eps.map(e => e.value)).filter(v => v != null);
    let [lo, hi] = [Math.min(0, ...vals), Math.max(0, ...vals)]; if (lo === hi) hi = lo + 1;
    const W = 720, L = 160, R = 20, rowH = 30, H = rows.length * rowH + 34, X = v => L + (v - lo) / (hi - lo) * (W - L - R);
    const svg = sv("svg", {width: W, height: H, class: "bench-plot", role: "img"});
    svg.append(sv("line", {x1: X(0), x2: X(0), y1: 4, y2: H - 28, stroke: "#999"}));
    for (let i = 0; i <= 4; i++) { const v = lo + (hi - lo) * i / 4; svg.append(sv("text", {x: X(v), y: H - 10, "text-anchor": "middle"}, num(v, 1))); }
    rows.forEach((r, i) => {
      const y = 8 + i * rowH;
      svg.append(sv("text", {x: L - 8, y: y + 14, "text-anchor": "end"}, r.team));
      svg.append(sv("rect", {x: Math.min(X(0), X(r.mean)), y, width: Math.abs(X(r.mean) - X(0)), height: 20, fill: "#4c72b0", "fill-opacity": 0.6},
                    sv("title", {}, `${r.team}: mean ${num(r.mean, 3)}`)));
      if (r.ci_low != null) svg.append(sv("path", {d: `M${X(r.ci_low)},${y + 10}H${X(r.ci_high)}M${X(r.ci_low)},${y + 4}V${y + 16}M${X(r.ci_high)},${y + 4}V${y + 16}`,
                                                   stroke: "#111", "stroke-width": 1.5, fill: "none"}));
      for (const e of eps.filter(e => e.team === r.team))
        svg.append(sv("circle", {cx: X(e.value), cy: y + 10, r: 3, fill: "#111", "fill-opacity": 0.45}, sv("title", {}, `seed ${e.seed}: ${num(e.value, 3)}`)));
    });
    return svg;
  }
  const rate = v => v && typeof v === "object" && "value" in v ? `${num(v.value)} [${num(v.ci95[0])}, ${num(v.ci95[1])}]` : (typeof v === "number" ? num(v) : text(v));
  const mark = ok => ok == null ? "?" : (ok ? "right" : "wrong");
  const verdict = v => v.error ? "failed: " + v.error : `blamed ${v.blamed ?? "no one"} at steps ${(v.cited || []).join(", ") || "-"}: ` +
    `agent ${mark(v.agent_hit)}, step ${mark(v.step_hit)}`;
  function criticView() {
    const out = [el("h2", {text: `Critic accuracy per source (backend ${view.backend || "?"})`})];
    out.push(table(["source", "critic", "cases", "agent acc [95 % CI]", "step acc [95 % CI]", "joint", "agent, ties at random", "chance agent / step", "ties", "failed"],
      view.summaries.map(s => el("tr", {}, td(s.source), td(s.critic), td(s.cases), td(rate(s.agent)), td(rate(s.step)), td(rate(s.joint)),
        tdn(s.agent_expected), td(`${num(s.chance_agent)} / ${num(s.chance_step)}`), td(s.ties), td(s.critic_failures))), "critic-summary"));
    if ((view.label_agreement || []).length) {
      out.push(el("h2", {text: "Agreement with human labels"}));
      out.push(table(["critic", "labels", "agent agreement [95 % CI]", "step agreement [95 % CI]", "labels with a step",
                      "Cohen's kappa", "no verdict"],
        view.label_agreement.map(a => el("tr", {}, td(a.critic), td(a.labels), td(rate(a.agent)),
          td(a.step_labels ? rate(a.step) : "-"), td(a.step_labels), td(a.kappa == null ? "undefined" : num(a.kappa)),
          td(a.no_verdict))), "label-agreement"));
    }
    for (const [file, recs] of Object.entries(view.cases)) {
      out.push(el("h3", {text: `${file}: ${recs.length} case(s)`}));
      const critics = [...new Set(recs.flatMap(r => Object.keys(r.critics || {})))];
      out.push(table(["case", "seed", "faulty agent", "faulty steps", "team return (clean)"].concat(critics.map(c => `${c}: verdict`)),
        recs.map(r => el("tr", {}, td(r.case), td(r.seed), td(r.truth_agent), td((r.faulty_steps || []).join(", ")),
          td(`${num(r.team_return, 1)} (${num(r.clean_team_return, 1)})`),
          critics.map(c => td(verdict((r.critics || {})[c] || {})))))));
    }
    return out;
  }

  // -- page -------------------------------------------------------------------------------------
  function tabs() {
    if (view.kind === "bench") return [["bench", "Results"]];
    if (view.kind === "eval-critic") return [["critic", "Critic evaluation"]];
    return [["curve", "Learning curve & usage"], ["agents", "Agents"], ["episodes", "Episodes"]]
      .concat(view.maskills ? [["skills", "Skills"]] : [], [["config", "Config"]]);
  }
  function render() {
    const [tab0, arg] = decodeURIComponent(location.hash.slice(1)).split("/");
    const all = tabs(), tab = all.some(t => t[0] === tab0) ? tab0 : all[0][0];
    document.getElementById("title").textContent = view.title;
    document.title = view.title + " - lang_pz";
    document.getElementById("subtitle").textContent = view.source + (view.kind === "run" ? (view.finished ? " (finished)" : " (unfinished: showing what is written)") : "");
    document.getElementById("tabs").replaceChildren(...all.map(([k, label]) =>
      el("button", {class: k === tab ? "on" : "", "data-tab": k, text: label, onclick: () => { location.hash = k; }})));
    const draw = {curve: curveView, agents: () => agentsView(arg), episodes: () => episodesView(arg), skills: skillsView,
      config: () => [el("h2", {text: "config.json"}), el("pre", {class: "block", text: JSON.stringify(view.config, null, 1)})],
      bench: benchView, critic: criticView}[tab];
    main().replaceChildren(...draw());
  }
  window.addEventListener("hashchange", () => view && render());
  return {
    view(v) { view = v; render(); },
    episode(id, data) { episodes[id] = data; const w = waiting[id] || []; delete waiting[id]; w.forEach(f => f(data)); },
  };
})();
