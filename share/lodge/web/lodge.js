// Lodge's web page: plain JavaScript, no build step, nothing from elsewhere.
// Everything it shows comes from lodge web's JSON API and its two
// WebSockets (lodge-web(8)); every change is a POST carrying the session's
// CSRF token.  The console is Debian's xterm.js, bundled as LodgeXterm.
"use strict";

const $ = (id) => document.getElementById(id);
const app = { csrf: "", role: "viewer", user: "", prev: null, hist: {}, ws: null, con: null, detail: null,
              sort: { key: "name", desc: false }, filter: "" };
const HIST = 30;                     // sparkline points (seconds)

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const k of kids) e.append(k);
  return e;
}

async function api(method, path, body) {
  const opt = { method, credentials: "same-origin", headers: {} };
  if (method === "POST") {
    opt.headers["X-CSRF-Token"] = app.csrf;
    opt.headers["Content-Type"] = "application/json";
    opt.body = JSON.stringify(body || {});
  }
  const r = await fetch(path, opt);
  let j = {};
  try { j = await r.json(); } catch (e) { /* an empty body */ }
  if (r.status === 401 && path !== "/api/login") showLogin();
  return { status: r.status, ok: r.ok, json: j };
}

// ---- the dialog that confirms --------------------------------------------------------

function confirmDialog(text, yes) {
  return new Promise((resolve) => {
    const d = $("confirm");
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = yes || "Yes";
    d.onclose = () => resolve(d.returnValue === "yes");
    d.returnValue = "";
    d.showModal();
  });
}

// ---- log in and out --------------------------------------------------------------------

function show(view) {
  const beside = ["jobs-view", "networks-view"];   // shown with the domains (the pool's: pool())
  for (const v of ["login-view", "domains-view", "detail-view", "create-view", "install-view", "console-view", "edit-view",
                   ...beside])
    $(v).hidden = !view.includes(v) && !(beside.includes(v) && view.includes("domains-view"));
  if (view.includes("domains-view")) { networks(); defined(); pool(); }
  else $("pool-view").hidden = true;
}

// The host's networks (lodge network-list): looked at when the domains
// are shown and on Refresh; they change seldom, so not once a second.
async function networks() {
  const r = await api("GET", "/api/networks");
  if (!r.ok) return;
  $("networks").tBodies[0].replaceChildren(...r.json.map((n) => el("tr", { "data-network": n.network },
    el("td", {}, n.network), el("td", {}, n.mode), el("td", {}, n.bridge + " (" + n.bridge_state + ")"),
    el("td", {}, n.subnet || "-"), el("td", {}, "dnsmasq " + n.dnsmasq), el("td", {}, String(n.leases)),
    el("td", {}, String(n.vifs)))));
  $("networks-none").hidden = r.json.length > 0;
  $("networks").hidden = !r.json.length;
}
$("networks-refresh").addEventListener("click", networks);

// The pool's domains (lodge list --pool), on a host in a pool only; read
// only, and on Refresh: each look asks etcd.
async function pool() {
  const r = await api("GET", "/api/pool");
  $("pool-view").hidden = !r.ok || !r.json.pool;
  if (!r.ok || !r.json.pool) return;
  const doms = r.json.domains;
  $("pool").tBodies[0].replaceChildren(...doms.map((d) => el("tr", { "data-pool-domain": d.name },
    el("td", {}, d.name), el("td", {}, d.host || "-"), el("td", {}, d.state), el("td", {}, String(d.memory_mib)),
    el("td", {}, d.ha ? "yes" : "no"), el("td", {}, d.why || ""))));
  $("pool-none").hidden = doms.length > 0;
  $("pool").hidden = !doms.length;
}
$("pool-refresh").addEventListener("click", pool);

function showLogin() {
  if (app.ws) { app.ws.onclose = null; app.ws.close(); app.ws = null; }
  $("who").hidden = true;
  show(["login-view"]);
  $("login-user").focus();
}

function loggedIn(j) {
  app.csrf = j.csrf; app.role = j.role; app.user = j.user; app.stateOrder = j.state_order || [];
  $("user").textContent = j.user + " (" + j.role + ")";
  $("who").hidden = false;
  document.body.classList.toggle("viewer", j.role !== "admin");
  show(["domains-view"]);
  connectUpdates();
}

$("login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const r = await api("POST", "/api/login", { user: $("login-user").value, password: $("login-password").value });
  $("login-password").value = "";
  if (!r.ok) { $("login-error").textContent = r.json.error || ("login failed: " + r.status); return; }
  $("login-error").textContent = "";
  loggedIn(r.json);
});

$("logout").addEventListener("click", async () => { await api("POST", "/api/logout"); showLogin(); });

// ---- live updates --------------------------------------------------------------------------

function connectUpdates() {
  if (app.ws) return;
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/ws/updates",
                           "lodge-updates");
  app.ws = ws;
  ws.onmessage = (m) => update(JSON.parse(m.data));
  ws.onclose = () => { app.ws = null; setTimeout(() => { if (!$("who").hidden) connectUpdates(); }, 2000); };
}

function bytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  for (; n >= 1024 && i < u.length - 1; i++) n /= 1024;
  return (i ? n.toFixed(1) : Math.round(n)) + " " + u[i];
}

function spark(values) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("viewBox", "0 0 " + (HIST - 1) + " 100");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  const max = Math.max(100, ...values);
  const pts = values.map((v, i) => (HIST - values.length + i) + "," + (100 - (v * 100) / max).toFixed(1));
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", pts.join(" "));
  svg.append(line);
  svg.setAttribute("aria-label", "CPU over the last " + values.length + " s");
  return svg;
}

// A domain's rates since the last message.
function rates(d, prev, dt) {
  const p = prev && prev[d.name];
  if (!p || !d.io || !p.io || dt <= 0 || p.id !== d.id) return null;
  return {
    cpu: Math.max(0, ((d.cpu_s - p.cpu_s) / dt) * 100),
    rd: (d.io.disk_rd_bytes - p.io.disk_rd_bytes) / dt, wr: (d.io.disk_wr_bytes - p.io.disk_wr_bytes) / dt,
    rx: (d.io.net_rx_bytes - p.io.net_rx_bytes) / dt, tx: (d.io.net_tx_bytes - p.io.net_tx_bytes) / dt,
  };
}

function update(msg) {
  const h = msg.host;
  $("host").textContent = "Host: " + h.nr_cpus + " CPUs, " + (h.cpu_pct / h.nr_cpus).toFixed(0) + "% busy, load " +
    h.load1.toFixed(2) + ", " + h.free_memory_mib + " of " + h.total_memory_mib + " MiB free";
  const prev = app.prev, dt = prev ? (msg.t - prev.t) / 1000 : 0;
  const byName = {};
  for (const d of msg.domains) byName[d.name] = d;
  const tbody = document.querySelector("#domains tbody");
  // A defined domain's off row is defined()'s: it stays until that says.
  for (const tr of [...tbody.rows])
    if (!byName[tr.dataset.name] && !tr.dataset.off) { tr.remove(); delete app.hist[tr.dataset.name]; }
  for (const d of msg.domains) {
    const r = rates(d, prev && prev.byName, dt);
    const hist = (app.hist[d.name] = app.hist[d.name] || []);
    if (r) { hist.push(r.cpu); if (hist.length > HIST) hist.shift(); }
    row(tbody, d, r, hist);
  }
  app.prev = { t: msg.t, byName };
  arrange(tbody);
  if (msg.jobs) jobs(msg.jobs);
  // The defined domains: every few seconds (they change when someone
  // edits, starts or stops one), at once when one started or stopped.
  const names = msg.domains.map((d) => d.name).join(" ");
  if (names !== app.running || !app.definedAt || msg.t - app.definedAt > 5000) {
    app.running = names; app.definedAt = msg.t; defined();
  }
  if (app.detail && byName[app.detail]) detail(byName[app.detail]);
}

// The dashboard's filter (/) and sort (< >, I, P, M): rows hidden whose
// name does not hold the filter, the rest in the column's order, Domain-0
// first as in xl list.
function arrange(tbody) {
  const { key, desc } = app.sort, byName = app.prev ? app.prev.byName : {};
  const value = (tr) => {
    const d = byName[tr.dataset.name] || {};
    if (key === "cpu") { const h = app.hist[tr.dataset.name] || []; return h.length ? h[h.length - 1] : -1; }
    if (key === "state") return app.stateOrder.indexOf(d.state);      // the dashboard's order, not the words
    return d[key] === null || d[key] === undefined ? -1 : d[key];
  };
  const rows = [...tbody.rows].sort((a, b) => {
    if (a.dataset.name === "Domain-0" || b.dataset.name === "Domain-0") return a.dataset.name === "Domain-0" ? -1 : 1;
    const x = value(a), y = value(b);
    const c = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : x - y;
    return desc ? -c : c;
  });
  rows.forEach((tr, i) => { if (tbody.rows[i] !== tr) tbody.append(tr); });
  for (const tr of rows) tr.hidden = app.filter !== "" && !tr.dataset.name.includes(app.filter);
  for (const th of document.querySelectorAll("#domains th[data-sort]"))
    th.setAttribute("aria-sort", th.dataset.sort !== key ? "none" : desc ? "descending" : "ascending");
}

document.querySelector("#domains thead").addEventListener("click", (ev) => {
  const th = ev.target.closest("th[data-sort]");
  if (!th) return;
  app.sort = { key: th.dataset.sort, desc: app.sort.key === th.dataset.sort ? !app.sort.desc : false };
  arrange(document.querySelector("#domains tbody"));
});
$("filter").addEventListener("input", () => {
  app.filter = $("filter").value;
  arrange(document.querySelector("#domains tbody"));
});

function cell(label, content, cls) {
  const td = el("td", { "data-label": label, class: cls || "" });
  td.append(content);
  return td;
}

function row(tbody, d, r, hist) {
  let tr = [...tbody.rows].find((t) => t.dataset.name === d.name);
  const fresh = el("tr", { id: "dom-" + d.name, "data-name": d.name });
  const state = d.state === "?" ? "unknown (" + (d.why || "not answering") + ")" : d.state;
  const cpu = el("span", {}, r ? r.cpu.toFixed(0) + "% " : "- ");
  cpu.append(spark(hist));
  fresh.append(
    cell("Name", d.id === 0 ? d.name : el("a", { href: "#", className: "detail-link", "data-action": "detail" }, d.name)),
    cell("ID", d.id === null ? "-" : String(d.id), "num"),
    cell("State", el("span", { class: "state state-" + (d.state === "?" ? "unknown" : d.state) }, state)),
    cell("vCPUs", d.vcpus === null ? "-" : String(d.vcpus), "num"),
    cell("Memory", d.memory_mib === null ? "-" : d.memory_mib + " MiB", "num"),
    cell("CPU", cpu),
    cell("Disk read / write", r ? bytes(r.rd) + "/s / " + bytes(r.wr) + "/s" : "-"),
    cell("Net in / out", r ? bytes(r.rx) + "/s / " + bytes(r.tx) + "/s" : "-"),
    cell("Actions", d.id === 0 ? "" : actions(d)));
  if (tr) tr.replaceWith(fresh); else tbody.append(fresh);
}

const VERBS = [
  ["pause", "Pause", (d) => d.state === "running", null],
  ["unpause", "Unpause", (d) => d.state === "paused", null],
  ["shutdown", "Shut down", () => true, "Shut down %s? The guest is asked to power off."],
  ["reboot", "Reboot", () => true, "Reboot %s? The guest is reset."],
  ["destroy", "Destroy", () => true, "Destroy %s? It ends at once, as if its power were cut."],
];

function actions(d) {
  const span = el("span");
  span.append(el("button", { type: "button", "data-action": "console" }, "Console"));
  for (const [verb, label, when, ask] of VERBS)
    if (app.role === "admin" && when(d))
      span.append(el("button", { type: "button", "data-action": verb, class: ask ? "danger admin" : "admin" }, label));
  return span;
}

// ---- the defined domains (domains_dir's configs) that are not running --------------------------

// Their rows in the domains' table, state off: Start, Edit, Delete and
// autostart, as the dashboard's S, e, D and A (GET /api/defined).
async function defined() {
  const r = await api("GET", "/api/defined");
  if (!r.ok) return;
  const tbody = document.querySelector("#domains tbody");
  const off = r.json.filter((d) => d.state === "off");
  const names = new Set(off.map((d) => d.name));
  for (const tr of [...tbody.rows]) if (tr.dataset.off && !names.has(tr.dataset.name)) tr.remove();
  for (const d of off) {
    const tr = [...tbody.rows].find((t) => t.dataset.name === d.name);
    if (tr && !tr.dataset.off) continue;       // it runs: the live update's row
    const fresh = el("tr", { id: "dom-" + d.name, "data-name": d.name, "data-off": "1" });
    fresh.append(
      cell("Name", d.name),
      cell("ID", "-", "num"),
      cell("State", el("span", { class: "state state-off", title: d.why || "" },
                       d.why ? "off (its config does not load)" : d.autostart ? "off, autostart" : "off")),
      cell("vCPUs", d.vcpus === null ? "-" : String(d.vcpus), "num"),
      cell("Memory", d.memory_mib === null ? "-" : d.memory_mib + " MiB", "num"),
      cell("CPU", "-"), cell("Disk read / write", "-"), cell("Net in / out", "-"),
      cell("Actions", offActions(d)));
    if (tr) tr.replaceWith(fresh); else tbody.append(fresh);
  }
  arrange(tbody);
}

function offActions(d) {
  const span = el("span");
  span.append(el("button", { type: "button", "data-action": "edit" }, app.role === "admin" ? "Edit" : "Config"));
  if (app.role !== "admin") return span;
  span.append(el("button", { type: "button", "data-action": "start", class: "admin" }, "Start"),
    el("button", { type: "button", "data-action": "autostart", "data-on": d.autostart ? "" : "1", class: "admin" },
       d.autostart ? "Autostart off" : "Autostart on"),
    el("button", { type: "button", "data-action": "delete", class: "danger admin" }, "Delete"));
  return span;
}

async function offAction(name, verb, b) {
  const path = "/api/defined/" + encodeURIComponent(name);
  let r;
  if (verb === "edit") {
    r = await api("GET", path);
    if (r.ok) {
      app.editing = name;
      $("edit-name").textContent = name;
      $("edit-file").textContent = r.json.config;
      $("edit-text").value = r.json.text;
      $("edit-text").readOnly = app.role !== "admin";
      $("edit-error").textContent = "";
      show(["domains-view", "edit-view"]);
      $("edit-text").focus();
    }
  } else if (verb === "start") {
    r = await api("POST", path + "/start");
  } else if (verb === "autostart") {
    r = await api("POST", path + "/autostart", { autostart: !!b.dataset.on });
  } else if (verb === "delete") {
    if (!(await confirmDialog("Delete the config of " + name + "? Its disks are kept unless you say so next.", "Delete")))
      return;
    const disks = await confirmDialog("Also delete the disks of " + name +
                                      " (its own image files under the storage directories)?", "Delete its disks");
    r = await api("POST", path + "/delete", { disks });
  }
  $("action-error").textContent = r.ok ? "" : verb + " " + name + ": " + (r.json.error || r.status);
  defined();
}

$("edit-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const r = await api("POST", "/api/defined/" + encodeURIComponent(app.editing) + "/config", { text: $("edit-text").value });
  if (!r.ok) { $("edit-error").textContent = r.json.error || ("failed: " + r.status); return; }
  $("edit-error").textContent = "";
  show(["domains-view"]);
});
$("edit-cancel").addEventListener("click", () => show(["domains-view"]));

document.querySelector("#domains tbody").addEventListener("click", async (ev) => {
  const b = ev.target.closest("[data-action]");
  if (!b) return;
  ev.preventDefault();
  const name = b.closest("tr").dataset.name, verb = b.dataset.action;
  if (b.closest("tr").dataset.off) { offAction(name, verb, b); return; }
  if (verb === "detail") {
    app.detail = name; show(["domains-view", "detail-view"]); detail(app.prev.byName[name]); vifSpecs(); return;
  }
  if (verb === "console") { openConsole(name, false); return; }
  const v = VERBS.find((x) => x[0] === verb);
  if (v[3] && !(await confirmDialog(v[3].replace("%s", name), v[1]))) return;
  const r = await api("POST", "/api/domains/" + encodeURIComponent(name) + "/" + verb);
  $("action-error").textContent = r.ok ? "" : verb + " " + name + ": " + (r.json.error || r.status);
});

// The vif entries to offer: each Lodge network and bridge.
async function vifSpecs() {
  const [nets, brs, devs] = await Promise.all([api("GET", "/api/networks"), api("GET", "/api/bridges"),
                                               api("GET", "/api/blockdevs")]);
  $("vif-specs").replaceChildren(
    ...(nets.ok ? nets.json : []).map((n) => el("option", { value: "network=" + n.network }, "network " + n.network)),
    ...(brs.ok ? brs.json : []).map((b) => el("option", { value: "bridge=" + b.bridge }, "bridge " + b.bridge)));
  $("blockdevs").replaceChildren(...(devs.ok ? devs.json : []).filter((b) => !b.taken).map((b) =>
    el("option", { value: "phy:" + b.path + ",vdb,w" }, b.path + " (" + bytes(b.bytes) + ")")));
}

// ---- the detail view ---------------------------------------------------------------------------

// A duration as a person reads it: "2 h 5 min", "42 s".
function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  return d ? d + " d " + h + " h" : h ? h + " h " + m + " min" : m ? m + " min " + Math.floor(s % 60) + " s" :
    s.toFixed(s < 10 && s % 1 ? 1 : 0) + " s";
}
const mib = (v) => bytes(v * 1048576), kib = (v) => bytes(v * 1024);
// The detail view's rows: each figure of the list's JSON with its label
// and unit, in this order; one not named here is left out (a key is no label).
const DETAIL = [
  ["state", "State", String], ["id", "ID", String], ["pid", "Process (lodge-hyp)", String],
  ["vcpus", "vCPUs", String], ["cpu_s", "CPU time", (v) => v.toFixed(1) + " s"], ["uptime_s", "Uptime", duration],
  ["memory_mib", "Memory", mib], ["maxmem_mib", "Memory at most", mib], ["rss_kib", "Memory (RSS)", kib],
  ["balloon_mib", "Balloon", mib], ["guest_free_mib", "Free in the guest", mib],
  ["ksm_shared_kib", "Shared (KSM)", kib], ["thp_kib", "Huge pages (THP)", kib],
  ["addresses", "Addresses", (v) => v.join(", ") || "-"], ["why", "Why unknown", String],
];

// The row's figures from the update; the rest asked of GET /api/domains/NAME.
function detail(d) {
  $("detail-name").textContent = d.name;
  const tb = document.querySelector("#detail tbody");
  tb.replaceChildren();
  for (const [k, label, show] of DETAIL)
    if (k in d) tb.append(el("tr", { "data-key": k }, el("th", {}, label), el("td", {}, d[k] === null ? "-" : show(d[k]))));
  if (!$("memset-mib").value) $("memset-mib").value = d.memory_mib || "";
  if (!app.detailBusy) detailMore(d.name);
}

async function detailMore(name) {
  app.detailBusy = true;
  const r = await api("GET", "/api/domains/" + encodeURIComponent(name));
  app.detailBusy = false;
  if (!r.ok || app.detail !== name) return;
  const d = r.json, tb = document.querySelector("#devices tbody");
  tb.replaceChildren();
  for (const v of d.vcpu_list || [])
    tb.append(el("tr", {}, el("th", {}, "vCPU " + v.vcpu), el("td", {}, "host CPU " + v.cpu + ", " + v.cpu_s.toFixed(1) +
              " s, affinity " + v.affinity)));
  // A disk or vif is detached as the dashboard's x does: asked first.
  const detach = (kind, which) => app.role !== "admin" ? "" :
    el("button", { type: "button", class: "danger", "data-detach": kind, "data-which": which }, "Detach…");
  for (const k of d.disks)
    tb.append(el("tr", { "data-vdev": k.vdev }, el("th", {}, k.vdev), el("td", {}, k.path + (k.readonly ? " (read only)" : "") +
              ", read " + bytes(k.io.in_bytes) + ", written " + bytes(k.io.out_bytes)), el("td", {}, detach("block", k.vdev))));
  for (const v of d.vifs)
    tb.append(el("tr", { "data-mac": v.mac }, el("th", {}, v.ifname), el("td", {}, v.mac + " on " + (v.bridge || "-") +
              ", in " + bytes(v.io.in_bytes) + ", out " + bytes(v.io.out_bytes)), el("td", {}, detach("network", v.mac))));
  $("detail-tail").textContent = (d.console_tail || "").split("\n").slice(-15).join("\n");
  $("detail-history").textContent = d.history.join("\n");
}

$("detail-close").addEventListener("click", () => { app.detail = null; show(["domains-view"]); });

// Hot-plug, as the dashboard's details (a, v, x): attach a disk or a vif,
// detach one (a job: the guest is asked to let it go).
async function attach(kind, body) {
  const name = app.detail, r = await api("POST", "/api/domains/" + encodeURIComponent(name) + "/" + kind, body);
  $("action-error").textContent = r.ok ? "" : kind + " " + name + ": " + (r.json.error || r.status);
  if (!r.ok) $("action-error").scrollIntoView({ block: "center" });
  if (r.ok) detailMore(name);
  return r.ok;
}
$("attach-disk-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (await attach("block-attach", { disk: $("attach-disk").value })) $("attach-disk").value = "";
});
$("attach-vif-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (await attach("network-attach", { vif: $("attach-vif").value })) $("attach-vif").value = "";
});
$("devices").addEventListener("click", async (ev) => {
  const b = ev.target.closest("[data-detach]");
  if (!b) return;
  const name = app.detail, kind = b.dataset.detach, which = b.dataset.which;
  if (!(await confirmDialog("Detach " + which + " from " + name + "? The guest is asked to let it go.", "Detach"))) return;
  await attach(kind + "-detach", kind === "block" ? { vdev: which } : { vif: which });
});
$("save-button").addEventListener("click", async () => {
  const name = app.detail;
  if (!(await confirmDialog("Save " + name + " to the save directory? It ends once its state is on disk.", "Save"))) return;
  const r = await api("POST", "/api/domains/" + encodeURIComponent(name) + "/save");
  $("action-error").textContent = r.ok ? "" : "save: " + (r.json.error || r.status);
});
$("migrate-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const name = app.detail, dest = $("migrate-dest").value;
  if (!(await confirmDialog("Migrate " + name + " to " + dest + "? It leaves this host.", "Migrate"))) return;
  const r = await api("POST", "/api/domains/" + encodeURIComponent(name) + "/migrate", { dest });
  $("action-error").textContent = r.ok ? "" : "migrate: " + (r.json.error || r.status);
});
$("restore-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const r = await api("POST", "/api/restore", { name: $("restore-name").value });
  $("action-error").textContent = r.ok ? "" : "restore: " + (r.json.error || r.status);
});

// The jobs: a save's bytes, a migration's rounds, as they go.
function jobs(list) {
  const ul = $("jobs");
  ul.replaceChildren();
  for (const j of list.slice().reverse()) {
    const p = j.progress, how = !p ? "" : j.kind === "install" ? ", " + p.phase + ", " + p.pct + "%" :
      j.kind === "migrate" && p.round ?
      ", round " + p.round + ", " + p.dirty + " pages dirty, " + bytes(p.rate_kib * 1024) + "/s" :
      ", " + bytes(p.bytes) + (p.total ? " of " + bytes(p.total) : "");
    const li = el("li", { "data-job": j.id }, j.kind + " " + j.name + " by " + j.user + ": " + j.state + how +
                  (j.error ? " (" + j.error + ")" : ""));
    // An install is cancelled as the dashboard's k cancels one: asked first.
    if (j.kind === "install" && j.state === "running" && app.role === "admin")
      li.append(" ", el("button", { type: "button", class: "danger", "data-cancel": j.id, "data-name": j.name }, "Cancel…"));
    ul.append(li);
  }
}

$("jobs").addEventListener("click", async (ev) => {
  const b = ev.target.closest("[data-cancel]");
  if (!b) return;
  const id = b.dataset.cancel, name = b.dataset.name;
  if (!(await confirmDialog("Cancel the install of " + name + "? What it made is removed.", "Cancel install"))) return;
  const r = await api("POST", "/api/jobs/" + id + "/cancel");
  $("action-error").textContent = r.ok ? "" : "cancel: " + (r.json.error || r.status);
});

$("memset-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const r = await api("POST", "/api/domains/" + encodeURIComponent(app.detail) + "/mem-set",
                      { memory_mib: Number($("memset-mib").value) });
  $("action-error").textContent = r.ok ? "" : "mem-set: " + (r.json.error || r.status);
});

// ---- the create form ---------------------------------------------------------------------------

$("create-open").addEventListener("click", async () => {
  const r = await api("GET", "/api/create-form");
  if (!r.ok) return;
  const f = r.json, box = $("create-fields");
  box.replaceChildren();
  // On a PVM host, what a Linux kernel (a Debian guest's) will do there.
  $("create-guest").textContent = f.defaults.why + (f.linux_note ? " A Linux kernel: " + f.linux_note + "." : "");
  const devs = await api("GET", "/api/blockdevs");
  // The disk's choices, as the dashboard's form has them: a new sparse
  // image file (new:SIZE in MiB; disk_format says blank or ext4), or a
  // free block device of the host's.
  $("blockdevs").replaceChildren(el("option", { value: "new:1024" }, "a new 1 GiB image file (new:SIZE in MiB)"),
    ...(devs.ok ? devs.json : []).filter((b) => !b.taken).map((b) =>
      el("option", { value: b.path }, b.path + " (" + bytes(b.bytes) + ")")));
  // The vif's choices, as the dashboard's form takes them: a bridge, or
  // net:NAME for a Lodge network (its bridge, a fixed address).
  const [brs, nets] = await Promise.all([api("GET", "/api/bridges"), api("GET", "/api/networks")]);
  $("bridges").replaceChildren(
    ...(nets.ok ? nets.json : []).map((n) => el("option", { value: "net:" + n.network },
      "network " + n.network + " (" + n.mode + ", " + (n.subnet || "-") + ")")),
    ...(brs.ok ? brs.json : []).map((b) => el("option", { value: b.bridge }, "bridge " + b.bridge + " (" + b.state + ")")),
    el("option", { value: "new:" }, "a new bridge: new:NAME"));
  formFields(box, "create", f.fields, f.defaults,
              { disk: "blockdevs", bridge: "bridges", disk_format: "disk-formats" });
  $("create-error").textContent = "";
  show(["domains-view", "create-view"]);
  $("create-view").scrollIntoView();
  $("create-name").focus();
});

// A form's fields from the server's list: each its label (a person's
// words, units said), its input, its hint and, beside it, its error.
function formFields(box, prefix, fields, defaults, lists) {
  box.replaceChildren();
  for (const { key, label, hint } of fields) {
    const input = el("input", { id: prefix + "-" + key, name: key });
    if (lists[key]) input.setAttribute("list", lists[key]);
    if (key in defaults) input.value = defaults[key];
    box.append(el("label", { "data-field": key }, label + " ", input,
                  el("span", { class: "error", id: prefix + "-error-" + key, role: "alert" }),
                  el("span", { class: "hint" }, hint)));
  }
}

// A form sent: its fields as the body; a refusal beside the field the
// server names, that field in view and focused; else at the form's top.
async function sendForm(prefix, path) {
  const body = {};
  for (const input of $(prefix + "-fields").querySelectorAll("input")) if (input.value !== "") body[input.name] = input.value;
  for (const e of $(prefix + "-form").querySelectorAll(".error")) e.textContent = "";
  const r = await api("POST", path, body);
  if (r.ok) { show(["domains-view"]); return r; }
  const where = r.json.field && $(prefix + "-error-" + r.json.field);
  (where || $(prefix + "-error")).textContent = r.json.error || ("failed: " + r.status);
  const input = r.json.field && $(prefix + "-" + r.json.field);
  (input || $(prefix + "-error")).scrollIntoView({ block: "center" });
  if (input) input.focus();
  return r;
}

$("create-cancel").addEventListener("click", () => show(["domains-view"]));
$("create-form").addEventListener("submit", (ev) => { ev.preventDefault(); sendForm("create", "/api/domains"); });

// ---- the Debian install form (the dashboard's) ----------------------------------------------------

$("install-open").addEventListener("click", async () => {
  const [r, devs, nets, brs] = await Promise.all([api("GET", "/api/install-form"), api("GET", "/api/blockdevs"),
    api("GET", "/api/networks"), api("GET", "/api/bridges")]);
  if (!r.ok) return;
  $("partitions").replaceChildren(...(devs.ok ? devs.json : []).filter((b) => !b.taken).map((b) =>
    el("option", { value: b.path }, b.path + " (" + bytes(b.bytes) + ")")));
  $("networks-list").replaceChildren(
    ...(nets.ok ? nets.json : []).map((n) => el("option", { value: "net:" + n.network },
      "network " + n.network + " (" + n.mode + ", " + (n.subnet || "-") + ")")),
    ...(brs.ok ? brs.json : []).map((b) => el("option", { value: b.bridge }, "bridge " + b.bridge + " (" + b.state + ")")));
  formFields($("install-fields"), "install", r.json.fields, r.json.defaults, { disk: "partitions", network: "networks-list" });
  $("install-error").textContent = "";
  show(["domains-view", "install-view"]);
  $("install-view").scrollIntoView();
  $("install-name").focus();
});
$("install-cancel").addEventListener("click", () => show(["domains-view"]));
$("install-form").addEventListener("submit", (ev) => { ev.preventDefault(); sendForm("install", "/api/install"); });

// ---- the console --------------------------------------------------------------------------------

function closeConsole() {
  if (app.con) { app.con.ws.onclose = null; app.con.ws.close(); app.con.term.destroy(); app.con = null; }
  $("terminal").replaceChildren();
}

function openConsole(name, force) {
  closeConsole();
  $("console-name").textContent = name;
  $("console-mode").textContent = app.role === "admin" ? "" : "(read only)";
  show(["domains-view", "console-view"]);
  // The DOM renderer: the text is in the page (screen readers, tests).
  const term = new LodgeXterm.Terminal({ cols: 80, rows: 24, rendererType: "dom" });
  term.open($("terminal"));
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host +
                           "/api/ws/console/" + encodeURIComponent(name) + (force ? "?force=1" : ""), "lodge-console");
  ws.binaryType = "arraybuffer";
  const dec = new TextDecoder(), enc = new TextEncoder();
  app.con = { ws, term, name };
  ws.onmessage = async (m) => {
    if (typeof m.data !== "string") { term.write(dec.decode(new Uint8Array(m.data), { stream: true })); return; }
    const j = JSON.parse(m.data);
    if (j.in_use && app.role === "admin") {
      if (await confirmDialog(j.error + " Take it over?", "Take over")) openConsole(name, true);
      return;
    }
    $("console-mode").textContent = j.error || j.closed || "";
  };
  ws.onclose = () => { if ($("console-mode").textContent === "") $("console-mode").textContent = "(closed)"; };
  term.on("data", (d) => { if (app.role === "admin" && ws.readyState === 1) ws.send(enc.encode(d)); });
  term.focus();
}

$("console-close").addEventListener("click", () => { closeConsole(); show(["domains-view"]); });

// ---- start -------------------------------------------------------------------------------------

(async () => {
  const r = await api("GET", "/api/session");
  if (r.ok) loggedIn(r.json); else showLogin();
})();
