// Lifeline dashboard: plain JS, no build step, nothing fetched but this origin's JSON API.
(function () {
  "use strict";

  var LABELS = {
    ready: "READY", working: "WORKING", offline: "OFFLINE", dead: "DEAD",
    restarting: "RESTARTING", dead_failed_revive: "DEAD (UNRECOVERABLE)"
  };
  var ORDER = ["ready", "working", "restarting", "offline", "dead", "dead_failed_revive"];
  var POLL_MS = 2000;
  // The last-hour bar: 60 one-minute slots from the team's status changes, read at most every BAR_MS: the
  // first time the whole hour (up to BAR_PAGES answers of BAR_LIMIT), then only what came since the newest
  // change seen, less LAG_MS for changes the outbox logs late. The newest slot follows each agent's current
  // status and last transition on every poll, so a change shows at once.
  var SLOTS = 60, SLOT_MS = 60000, BAR_MS = 10000, BAR_LIMIT = 100, BAR_PAGES = 10, LAG_MS = 120000;
  // Trouble an operator must see even when it lasted a moment: a slot shows the worst it held.
  var TROUBLE = { restarting: 1, dead: 2, dead_failed_revive: 3 };

  var state = { team: null, key: null, agents: [], timer: null, polling: false, drawn: [],
    bar: { events: {}, newest: 0, known: 0, version: 0, at: 0 },
    settings: null,   // the team's settings (its maintenance pause), read with every poll
    agent: null,      // the agent the agent page shows
    revive: { busy: false, result: null } };
  var etags = {};   // url -> {etag, data}: unchanged answers come back as 304 with no body

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") { e.textContent = attrs[k]; }
        else if (k === "className") { e.className = attrs[k]; }
        else { e.setAttribute(k, attrs[k]); }
      });
    }
    (children || []).forEach(function (c) { if (c) { e.appendChild(c); } });
    return e;
  }

  function badge(status) {
    return el("span", { className: "badge status-" + status, "data-status": status, text: LABELS[status] || String(status).toUpperCase() });
  }

  function span(s) {
    if (s < 60) { return s + "s"; }
    var m = Math.floor(s / 60);
    if (m < 60) { return m + "m " + (s % 60) + "s"; }
    var h = Math.floor(m / 60);
    if (h < 48) { return h + "h " + (m % 60) + "m"; }
    return Math.floor(h / 24) + "d";
  }

  function age(iso) {
    if (!iso) { return "never"; }
    return span(Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000))) + " ago";
  }

  function until(iso) {
    if (!iso) { return "\u2013"; }
    var s = Math.floor((Date.parse(iso) - Date.now()) / 1000);
    return s >= 0 ? "in " + span(s) : span(-s) + " overdue";
  }

  function time(iso) { return iso ? new Date(iso).toLocaleString() : "\u2013"; }

  function clock(iso) { return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }

  // A paused agent is not marked dead however late it is (a maintenance window), so no deadline counts down.
  function paused(a) { return a.pausedUntil && Date.parse(a.pausedUntil) > Date.now(); }

  // ---- API ----------------------------------------------------------------------------------------------

  function AuthError(status, message, code) { this.status = status; this.message = message; this.code = code; }

  /** {@code once}: a URL not asked again, so not worth remembering for If-None-Match. */
  function api(path, once) {
    var url = "/v1/teams/" + encodeURIComponent(state.team) + path;
    var headers = { "Authorization": "Bearer " + state.key, "Accept": "application/json" };
    var cached = once ? null : etags[url];
    if (cached) { headers["If-None-Match"] = cached.etag; }
    return fetch(url, { headers: headers, cache: "no-store" }).then(function (r) {
      reachable(true);
      if (r.status === 304 && cached) { return cached.data; }
      return r.json().catch(function () { return {}; }).then(function (body) {
        if (r.status === 401 || r.status === 403) {
          // The gateway's own refusal (unknown key) has only a message; the API's has a code.
          throw new AuthError(r.status, body.error || body.message || "refused", body.code);
        }
        if (!r.ok) { throw new Error((body && (body.error || body.message)) || ("HTTP " + r.status)); }
        var etag = r.headers.get("ETag");
        if (etag && !once) { etags[url] = { etag: etag, data: body }; }
        return body;
      });
    }, function (e) {
      reachable(false);
      throw e;
    });
  }

  /** A POST the page makes for the operator; its refusals are shown where it was asked, never a sign-out. */
  function post(path) {
    var url = "/v1/teams/" + encodeURIComponent(state.team) + path;
    return fetch(url, { method: "POST", cache: "no-store",
      headers: { "Authorization": "Bearer " + state.key, "Accept": "application/json" } }).then(function (r) {
      reachable(true);
      return r.json().catch(function () { return {}; }).then(function (body) {
        return { status: r.status, ok: r.ok, body: body };
      });
    }, function (e) {
      reachable(false);
      throw e;
    });
  }

  function reachable(ok) { $("banner").hidden = ok; }

  function authFailed(e) {
    var msg = e.status === 401 || !e.code
      ? "The API key was not accepted (" + e.status + "). Check the team and key, then sign in again."
      : "This key may not read team \u201c" + state.team + "\u201d (" + e.status + " " + e.code + "): " + e.message;
    signOut(msg);
  }

  // ---- views --------------------------------------------------------------------------------------------

  function route() {
    var h = location.hash || "";
    var m = h.match(/^#agent\/(.+)$/);
    return m ? { view: "agent", agentId: decodeURIComponent(m[1]) } : { view: "team" };
  }

  function show(view) {
    $("login").hidden = view !== "login";
    $("team-view").hidden = view !== "team";
    $("agent-view").hidden = view !== "agent";
    $("sign-out").hidden = view === "login";
    $("team-name").textContent = view === "login" ? "" : "team " + state.team;
  }

  function refresh() {
    if (!state.key || state.polling) { return Promise.resolve(); }
    state.polling = true;
    var r = route();
    var p = Promise.all([r.view === "agent" ? refreshAgent(r.agentId) : refreshTeam(), refreshSettings()]);
    return p.then(function () {
      $("updated").textContent = "updated " + new Date().toLocaleTimeString();
    }, function (e) {
      if (e instanceof AuthError) { authFailed(e); }
    }).then(function () { state.polling = false; });
  }

  function refreshTeam() {
    show("team");
    var barDue = Date.now() - state.bar.at >= BAR_MS;
    return Promise.all([api("/agents"), api("/events?limit=25"), barDue ? loadBar() : null]).then(function (res) {
      // Unchanged answers (304s give back the same objects) in the same minute: leave the page as it is, so a
      // selection or hover survives; tick() keeps the ages counting.
      if (unchanged(["team", res[0], res[1], state.bar.version, barStart()])) { return; }
      state.agents = res[0].agents || [];
      renderCounts();
      renderAgents();
      renderEvents($("events"), res[1].events || []);
    });
  }

  // The team's maintenance pause, polled like the rest (a 304 when nothing changed).
  function refreshSettings() {
    return api("/settings").then(function (s) {
      state.settings = s;
      renderTeamPause();
    });
  }

  /** Shown while the pause lasts: tick() hides it when it runs out, a poll when the team is resumed. */
  function renderTeamPause() {
    var s = state.settings;
    var box = $("team-paused");
    var on = !!(state.key && s && s.pausedUntil && Date.parse(s.pausedUntil) > Date.now());
    var text = on ? "Team paused until " + time(s.pausedUntil) + (s.pauseReason ? " \u2014 " + s.pauseReason : "")
      + ". No agent is marked dead until then." : "";
    if (box.textContent !== text) { box.textContent = text; }
    box.hidden = !on;
  }

  function unchanged(parts) {
    var same = parts.length === state.drawn.length && parts.every(function (p, i) { return p === state.drawn[i]; });
    state.drawn = parts;
    return same;
  }

  // The bar's first slot starts on a whole minute, 59 minutes before the current one.
  function barStart() { return (Math.floor(Date.now() / SLOT_MS) - (SLOTS - 1)) * SLOT_MS; }

  function loadBar() {
    var bar = state.bar;
    var start = barStart();
    var since = new Date(bar.newest ? Math.max(start, bar.newest - LAG_MS) : start).toISOString();
    function page(until, n) {
      var url = "/events?type=AgentStatusChanged&limit=" + BAR_LIMIT + "&since=" + encodeURIComponent(since)
        + (until ? "&until=" + encodeURIComponent(until) : "");
      return api(url, true).then(function (body) {
        var events = body.events || [], fresh = 0;
        events.forEach(function (e) {
          if (!bar.events[e.eventId]) { bar.events[e.eventId] = e; fresh++; }
          bar.newest = Math.max(bar.newest, Date.parse(e.at));
        });
        if (fresh) { bar.version++; }
        if (events.length < BAR_LIMIT || !fresh) { return; }
        var oldest = events[events.length - 1].at;
        if (n + 1 < BAR_PAGES) { return page(oldest, n + 1); }
        // More than the pages allowed: what lies before the oldest change read is not known.
        bar.known = Math.max(bar.known, Date.parse(oldest));
        bar.version++;
      });
    }
    return page(null, 0).then(function () {
      bar.at = Date.now();
      Object.keys(bar.events).forEach(function (id) {
        if (Date.parse(bar.events[id].at) < start) { delete bar.events[id]; }
      });
    });
  }

  /** The bar's status changes, per agent. */
  function changesByAgent() {
    var out = {};
    Object.keys(state.bar.events).forEach(function (id) {
      var d = state.bar.events[id].detail || {};
      (out[d.agentId] = out[d.agentId] || []).push({ seq: d.seq, at: Date.parse(state.bar.events[id].at), from: d.from, to: d.to });
    });
    return out;
  }

  function renderCounts() {
    var counts = {};
    state.agents.forEach(function (a) { counts[a.status] = (counts[a.status] || 0) + 1; });
    var box = $("counts");
    box.textContent = "";
    box.appendChild(el("div", { className: "count", "data-status": "all" }, [
      el("span", { className: "n", text: String(state.agents.length) }), el("span", { text: "agents" })]));
    ORDER.forEach(function (s) {
      box.appendChild(el("div", { className: "count", "data-status": s }, [
        el("span", { className: "n", text: String(counts[s] || 0) }), badge(s)]));
    });
  }

  function renderAgents() {
    var filter = $("status-filter").value;
    var body = $("agent-rows");
    body.textContent = "";
    var shown = state.agents.filter(function (a) { return !filter || a.status === filter; });
    var changes = changesByAgent();
    shown.forEach(function (a) {
      var tr = el("tr", { className: "agent", "data-agent-id": a.agentId, "data-status": a.status }, [
        el("td", { className: "name", "data-label": "Agent" }, [
          el("strong", { text: a.name || a.agentId }), el("div", { className: "muted", text: a.agentId })]),
        el("td", { "data-label": "Status" }, [badge(a.status)]),
        el("td", { className: "age", "data-label": "Last heartbeat", "data-ts": a.heartbeatTs || "", text: age(a.heartbeatTs) }),
        paused(a) ? el("td", { className: "deadline", "data-label": "Deadline", title: a.pauseReason || "", text: "paused until " + clock(a.pausedUntil) })
          : el("td", { className: "deadline", "data-label": "Deadline", "data-deadline": (a.alive && a.deadline) || "", text: until(a.alive ? a.deadline : null) }),
        el("td", { className: "misses", "data-label": "Misses", text: String(a.consecutiveMisses || 0) }),
        el("td", { className: "task", "data-label": "Task", text: a.currentTaskId || "\u2013" }),
        el("td", { className: "host", "data-label": "Host", text: a.hostId || "\u2013" }),
        el("td", { className: "hour", "data-label": "Last hour" }, [lastHour(a, changes)])
      ]);
      tr.addEventListener("click", function () { location.hash = "#agent/" + encodeURIComponent(a.agentId); });
      body.appendChild(tr);
    });
    $("no-agents").hidden = shown.length > 0;
  }

  /**
   * The agent's last hour as SLOTS one-minute slots, oldest first, from the team's status changes of that
   * hour. Before its first change in the window an agent was in that change's "from" status. A slot shows
   * the worst trouble (restarting, dead, unrecoverable) the agent was in or entered during that minute, else
   * the status it held longest. Slots before it was registered are empty; when the hour held more changes than
   * the pages read, slots older than the oldest change read are marked unknown.
   */
  function lastHour(agent, changes) {
    var now = Date.now();
    var start = barStart();
    var known = state.bar.known;
    var mine = (changes[agent.agentId] || []).slice();
    // The outbox logs a change a moment after it is made; the agent's own last transition covers that gap.
    var last = agent.lastTransition;
    if (last && !mine.some(function (m) { return m.seq >= last.seq; })) {
      mine.push({ seq: last.seq, at: Date.parse(last.at), from: last.from, to: last.to });
    }
    mine.sort(function (x, y) { return x.at - y.at || x.seq - y.seq; });
    // Spans of time in one status, clipped to the window (a server clock ahead of this one counts as now).
    var t = Math.max(start, agent.registeredAt ? Date.parse(agent.registeredAt) : start);
    var status = mine.length ? mine[0].from : agent.status;
    var spans = [];
    mine.forEach(function (m) {
      var at = Math.min(Math.max(m.at, t), now);
      spans.push({ from: t, to: at, status: status, entered: false });
      spans.push({ from: at, to: at, status: m.to, entered: m.at >= t });
      t = at;
      status = m.to;
    });
    spans.push({ from: t, to: now, status: agent.status, entered: false });
    var slots = [];
    for (var i = 0; i < SLOTS; i++) {
      slots.push(slotStatus(spans, start + i * SLOT_MS, start + (i + 1) * SLOT_MS, known));
    }
    var bar = el("div", { className: "hourbar", role: "img", "aria-label": "Last hour: " + summary(slots) });
    bar.title = bar.getAttribute("aria-label");
    slots.forEach(function (st, k) {
      var minute = clock(new Date(start + k * SLOT_MS).toISOString());
      bar.appendChild(el("span", { className: "slot " + (st ? "status-" + st : "none"), "data-status": st || "none",
        title: minute + " " + (st ? (LABELS[st] || st) : "not registered") }));
    });
    return bar;
  }

  function slotStatus(spans, from, to, known) {
    var held = {}, trouble = null, any = false;
    spans.forEach(function (s) {
      var overlap = Math.min(to, s.to) - Math.max(from, s.from);
      var touched = overlap > 0 || (s.entered && s.from >= from && s.from < to);
      if (!touched) { return; }
      any = true;
      held[s.status] = (held[s.status] || 0) + Math.max(0, overlap);
      if (TROUBLE[s.status] && (!trouble || TROUBLE[s.status] > TROUBLE[trouble])) { trouble = s.status; }
    });
    if (!any) { return null; }
    if (to <= known) { return "unknown"; }
    if (trouble) { return trouble; }
    return Object.keys(held).reduce(function (a, b) { return held[b] > held[a] ? b : a; });
  }

  function summary(slots) {
    var minutes = {};
    slots.forEach(function (st) { if (st) { minutes[st] = (minutes[st] || 0) + 1; } });
    var parts = ORDER.concat(["unknown"]).filter(function (st) { return minutes[st]; }).map(function (st) {
      return (LABELS[st] || st) + " " + minutes[st] + " min";
    });
    return parts.length ? parts.join(", ") : "not registered";
  }

  function isAlert(e) {
    var d = e.detail || {};
    return e.type === "MassStaleSuspected" || (e.type === "AgentStatusChanged"
      && (d.to === "dead" || d.to === "dead_failed_revive"));
  }

  function renderEvents(list, events) {
    list.textContent = "";
    events.forEach(function (e) {
      var d = e.detail || {};
      var who = d.agentId || d.fromAgentId || d.aboutAgentId;
      list.appendChild(el("li", { "data-event-id": e.eventId, "data-type": e.type, className: isAlert(e) ? "alert" : "" }, [
        el("span", { className: "muted when", text: time(e.at) }),
        el("span", { className: "type", text: e.type }),
        who ? el("span", { text: who }) : null,
        d.to ? badge(d.to) : null,
        d.trigger ? el("span", { className: "muted", text: d.trigger }) : null,
        d.reason || d.message ? el("span", { className: "muted", text: d.reason || d.message }) : null
      ]));
    });
    if (!events.length) { list.appendChild(el("li", { className: "muted", text: "No events yet." })); }
  }

  function facts(dl, pairs) {
    dl.textContent = "";
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") { return; }
      dl.appendChild(el("dt", { text: p[0] }));
      dl.appendChild(el("dd", {}, [p[1] instanceof Node ? p[1] : document.createTextNode(String(p[1]))]));
    });
  }

  function refreshAgent(agentId) {
    show("agent");
    var base = "/agents/" + encodeURIComponent(agentId);
    return Promise.all([api(base), api(base + "/transitions?limit=50"), api(base + "/revivals"),
      api("/events?limit=20&agentId=" + encodeURIComponent(agentId))]).then(function (res) {
      if (unchanged(["agent", agentId].concat(res))) { return; }
      var a = res[0];
      state.agent = a;
      renderRevive();
      var title = $("agent-title");
      title.textContent = "";
      title.appendChild(document.createTextNode((a.name || a.agentId) + " "));
      title.appendChild(badge(a.status));
      var ageEl = el("span", { className: "age", "data-ts": a.heartbeatTs || "", text: age(a.heartbeatTs) });
      var err = a.lastError;
      facts($("agent-facts"), [["Id", a.agentId], ["Role", a.role], ["Host", a.hostId], ["Last heartbeat", ageEl],
        ["Deadline", a.alive ? time(a.deadline) : undefined], ["Misses", a.consecutiveMisses], ["Grace misses", a.graceMisses],
        ["Stale after", a.staleAfterSeconds + "s"], ["Schedule", a.schedule && a.schedule + (a.timeZone ? " (" + a.timeZone + ")" : "")],
        ["Task", a.currentTaskId], ["Paused until", a.pausedUntil && time(a.pausedUntil)], ["Pause reason", a.pauseReason],
        ["Registered", time(a.registeredAt)], ["Errors reported", a.errorsReported], ["Last error", err && (err.category + ": " + err.message + " (" + time(err.at) + ")")],
        ["Session rotations", a.sessionRotations]]);
      var s = a.stats || {};
      facts($("agent-stats"), [["Messages", s.messagesProcessed], ["Tool calls", s.toolCallsExecuted],
        ["Errors", s.errorsEncountered], ["Uptime", s.uptime !== undefined ? duration(s.uptime) : undefined]]);
      if (!$("agent-stats").childNodes.length) { $("agent-stats").appendChild(el("dd", { className: "muted", text: "No stats reported." })); }
      renderCheckpoint(a.checkpointSummary);
      $("agent-metadata").textContent = a.metadata ? JSON.stringify(a.metadata, null, 2) : "No metadata.";
      $("metadata-at").textContent = a.metadataAt ? "sent " + age(a.metadataAt) : "";

      var rows = $("transition-rows");
      rows.textContent = "";
      (res[1].transitions || []).forEach(function (t) {
        rows.appendChild(el("tr", { className: "transition" }, [
          el("td", { text: String(t.seq) }), el("td", { text: time(t.at) }),
          el("td", {}, [badge(t.from)]), el("td", {}, [badge(t.to)]),
          el("td", { text: t.trigger }), el("td", { text: t.reason || "" })]));
      });
      var rev = $("revival-rows");
      rev.textContent = "";
      var revivals = res[2].revivals || [];
      revivals.forEach(function (r) {
        rev.appendChild(el("tr", { className: "revival" }, [
          el("td", { text: time(r.startedAt) }), el("td", { text: r.outcome }), el("td", { text: String(r.attempts) }),
          el("td", { text: (r.steps || []).map(function (st) { return st.step + " " + st.outcome; }).join(", ") })]));
      });
      $("no-revivals").hidden = revivals.length > 0;
      renderEvents($("agent-events"), res[3].events || []);
    });
  }

  // ---- revive -------------------------------------------------------------------------------------------

  function revivable(a) { return a && (a.status === "dead" || a.status === "dead_failed_revive"); }

  /** The revive controls of the agent page: offered while the agent is dead, the last answer kept in view. */
  function renderRevive() {
    var a = state.agent, rv = state.revive;
    var offer = revivable(a) || rv.busy;
    $("revive-box").hidden = !offer;
    if (!offer) { $("revive-confirm").hidden = true; }
    $("revive-button").hidden = !$("revive-confirm").hidden;
    $("revive-button").disabled = rv.busy;
    $("revive-yes").disabled = rv.busy;
    $("revive-no").disabled = rv.busy;
    var out = $("revive-result");
    out.hidden = !rv.result;
    out.className = "notice" + (rv.result ? " " + rv.result.kind : "");
    out.textContent = rv.result ? rv.result.text : "";
  }

  // Another page or another key: the controls start closed, showing no answer of an earlier revive.
  function resetRevive() {
    state.agent = null;
    state.revive = { busy: false, result: null };
    $("revive-confirm").hidden = true;
    renderRevive();
  }

  function askRevive() {
    var a = state.agent;
    if (!revivable(a)) { return; }
    $("revive-question").textContent = "Ask " + (a.hostId || "its host") + " to restart " + (a.name || a.agentId) + "?";
    $("revive-confirm").hidden = false;
    state.revive.result = null;
    renderRevive();
    $("revive-no").focus();
  }

  function cancelRevive() {
    $("revive-confirm").hidden = true;
    renderRevive();
    $("revive-button").focus();
  }

  function revive() {
    var a = state.agent, rv = state.revive;
    if (!revivable(a) || rv.busy) { return; }
    rv.busy = true;
    rv.result = { kind: "pending", text: "Starting a revive of " + (a.name || a.agentId) + "\u2026" };
    renderRevive();
    post("/agents/" + encodeURIComponent(a.agentId) + "/revive").then(function (r) {
      var b = r.body || {};
      if (r.status === 202) {
        return { kind: "ok", text: "Revive started (" + b.executionName + "): " + (a.hostId || "the host")
          + " is asked to restart the agent; its status follows below." };
      }
      if (r.status === 401 || r.status === 403) {
        return { kind: "error", text: "Not allowed (" + r.status + (b.code ? " " + b.code : "") + "): "
          + (b.error || b.message || "refused") + ". A revive needs an admin key; sign in with one to revive." };
      }
      return { kind: "error", text: "The revive was not started (" + r.status + (b.code ? " " + b.code : "") + "): "
        + (b.error || b.message || "no reason given") };
    }, function () {
      return { kind: "error", text: "The API could not be reached, so the revive may not have started. "
        + "Check the revive executions below before trying again." };
    }).then(function (result) {
      // Only for the agent it was asked for: the operator may have moved on to another page meanwhile.
      if (state.revive !== rv) { return; }
      rv.busy = false;
      rv.result = result;
      $("revive-confirm").hidden = true;
      renderRevive();
      state.polling = false;
      refresh();
    });
  }

  // A summary, never the contents: a checkpoint can be kilobytes of an agent's private state.
  function renderCheckpoint(c) {
    var dl = $("agent-checkpoint");
    if (!c) {
      dl.textContent = "";
      dl.appendChild(el("dd", { className: "muted", text: "No checkpoint saved." }));
      return;
    }
    var keys = c.keys ? c.keys.join(", ") + (c.keyCount > c.keys.length ? " and " + (c.keyCount - c.keys.length) + " more" : "") : undefined;
    facts(dl, [["Saved", c.savedAt && el("span", { className: "age", "data-ts": c.savedAt, text: age(c.savedAt) })],
      ["Size", bytes(c.sizeBytes)], ["Type", c.type !== "object" ? c.type : undefined],
      ["Keys", c.keyCount === 0 ? "none" : keys],
      ["On recovery", c.offeredOnRecovery ? "offered back" : "not offered (" + (c.reason || "unavailable") + ")"]]);
  }

  function bytes(n) { return n < 1024 ? n + " B" : (n / 1024).toFixed(1) + " KiB"; }

  function duration(seconds) {
    var s = Math.floor(seconds);
    if (s < 120) { return s + "s"; }
    if (s < 7200) { return Math.floor(s / 60) + "m"; }
    return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }

  function tick() {
    var nodes = document.querySelectorAll("[data-ts]");
    Array.prototype.forEach.call(nodes, function (n) { n.textContent = age(n.getAttribute("data-ts")); });
    nodes = document.querySelectorAll("[data-deadline]");
    Array.prototype.forEach.call(nodes, function (n) { n.textContent = until(n.getAttribute("data-deadline")); });
    renderTeamPause();
  }

  // ---- session ------------------------------------------------------------------------------------------

  function signIn(team, key) {
    state.team = team;
    state.key = key;
    sessionStorage.setItem("lifeline.team", team);
    sessionStorage.setItem("lifeline.key", key);
    $("auth-error").hidden = true;
    etags = {};
    state.bar = { events: {}, newest: 0, known: 0, version: 0, at: 0 };
    state.settings = null;
    state.drawn = [];
    resetRevive();
    start();
  }

  function signOut(message) {
    sessionStorage.removeItem("lifeline.key");
    state.key = null;
    etags = {};
    if (state.timer) { clearInterval(state.timer); state.timer = null; }
    var err = $("auth-error");
    err.hidden = !message;
    err.textContent = message || "";
    $("team-input").value = state.team || sessionStorage.getItem("lifeline.team") || "local";
    $("key-input").value = "";
    state.settings = null;
    renderTeamPause();
    show("login");
  }

  function start() {
    if (state.timer) { clearInterval(state.timer); }
    state.timer = setInterval(refresh, POLL_MS);
    refresh();
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("login-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      signIn($("team-input").value.trim(), $("key-input").value.trim());
    });
    $("sign-out").addEventListener("click", function () { signOut(null); });
    $("status-filter").addEventListener("change", function () { renderAgents(); });
    $("counts").addEventListener("click", function (ev) {
      var c = ev.target.closest(".count");
      if (c) { $("status-filter").value = c.getAttribute("data-status") === "all" ? "" : c.getAttribute("data-status"); renderAgents(); }
    });
    $("back-link").addEventListener("click", function (ev) { ev.preventDefault(); location.hash = ""; });
    $("home-link").addEventListener("click", function (ev) { ev.preventDefault(); location.hash = ""; });
    $("revive-button").addEventListener("click", askRevive);
    $("revive-no").addEventListener("click", cancelRevive);
    $("revive-yes").addEventListener("click", revive);
    window.addEventListener("hashchange", function () {
      resetRevive();
      state.polling = false;
      refresh();
    });
    setInterval(tick, 1000);
    var team = sessionStorage.getItem("lifeline.team");
    var key = sessionStorage.getItem("lifeline.key");
    if (team && key) { state.team = team; state.key = key; start(); } else { signOut(null); }
  });
})();
