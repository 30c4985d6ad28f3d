// Lifeline dashboard: plain JS, no build step, nothing fetched but this origin's JSON API.
(function () {
  "use strict";

  var LABELS = {
    ready: "READY", working: "WORKING", offline: "OFFLINE", dead: "DEAD",
    restarting: "RESTARTING", dead_failed_revive: "DEAD (UNRECOVERABLE)"
  };
  var ORDER = ["ready", "working", "restarting", "offline", "dead", "dead_failed_revive"];
  // Triage: the table lists trouble first, in this order, then flapping agents, then the rest (by name).
  var TRIAGE = { dead: 0, dead_failed_revive: 1, restarting: 2 };
  var FLAPPING_RESTARTS = 3;   // restarts in the last hour from which an agent counts as flapping
  var TROUBLED = { dead: 1, dead_failed_revive: 1, restarting: 1 };
  var POLL_MS = 2000;
  // The team's agents a page at a time, never the whole team: every POLL_MS only the agents whose status changed
  // (changedSince, merged in); every PAGE_MS the pages shown (PAGE agents each, more with "Show more agents", at most
  // MAX_PAGES) and every agent in trouble (a page of each troubled status), which also brings heartbeat ages, misses
  // and pauses up to date. More changes than CHANGES in one poll: the next poll reads the pages again.
  var PAGE = 100, MAX_PAGES = 10, CHANGES = 1000, PAGE_MS = 10000;
  // The last-hour bar: 60 one-minute slots from the team's status changes, read at most every BAR_MS: the
  // first time the whole hour (up to BAR_PAGES answers of BAR_LIMIT), then only what came since the newest
  // change seen, less LAG_MS for changes the outbox logs late. The newest slot follows each agent's current
  // status and last transition on every poll, so a change shows at once.
  var SLOTS = 60, SLOT_MS = 60000, BAR_MS = 10000, BAR_LIMIT = 100, BAR_PAGES = 10, LAG_MS = 120000;
  // Trouble an operator must see even when it lasted a moment: a slot shows the worst it held.
  var TROUBLE = { restarting: 1, dead: 2, dead_failed_revive: 3 };

  var state = { team: null, key: null, agents: [], timer: null, polling: false, drawn: [],
    view: null,       // the view on screen: login, team or agent (focus moves to its heading when it changes)
    focusView: false, // the next view drawn takes the focus (set by sign-in, a change of page)
    seen: null,       // agentId -> status at the last poll, for the announcements
    rows: {},         // agentId -> its table row, updated in place
    alertsOnly: false,
    bar: { events: {}, newest: 0, known: 0, version: 0, at: 0, rotations: {}, rotationsSig: "" },
    // the agents read so far (agentId -> agent), the pages shown, the time to ask changes from, when pages were read
    roster: { byId: {}, pages: 1, more: false, since: null, at: 0, version: 0 },
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
    return el("span", { className: "badge status-" + status, "data-status": status, text: label(status) });
  }

  function label(status) { return LABELS[status] || String(status).toUpperCase(); }

  /** Sets a node's text only when it changed, so a poll that changes nothing touches nothing. */
  function setText(node, text) { if (node.textContent !== text) { node.textContent = text; } }

  function setAttr(node, name, value) {
    if (value === null || value === undefined) { if (node.hasAttribute(name)) { node.removeAttribute(name); } }
    else if (node.getAttribute(name) !== value) { node.setAttribute(name, value); }
  }

  function name(a) { return a.name || a.agentId; }

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
  // An alive agent that waits (its turn ended, or a permission prompt) is alive: say what for and since when.
  function waitingText(a) {
    if (!a.alive || !a.waiting) { return ""; }
    return (a.waiting["for"] === "person" ? "waiting for a person" : "waiting for input") + " since " + clock(a.waiting.since);
  }

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

  /** A link such as a burst digest's, #status=dead: the team view, filtered to that status (then the plain hash). */
  function applyStatusLink() {
    var m = (location.hash || "").match(/^#status=([a-z_]+)$/);
    var select = $("status-filter");
    if (!m || !select) { return; }
    if (Array.prototype.some.call(select.options, function (o) { return o.value === m[1]; })) { select.value = m[1]; }
    history.replaceState(null, "", location.pathname + location.search);
  }

  function show(view) {
    $("login").hidden = view !== "login";
    $("team-view").hidden = view !== "team";
    $("agent-view").hidden = view !== "agent";
    $("sign-out").hidden = view === "login";
    setText($("team-name"), view === "login" ? "" : "team " + state.team);
    if (state.view !== view) { state.focusView = true; }
    state.view = view;
    renderTitle();
  }

  /**
   * After a change of view (sign-in, sign-out, opening an agent, going back) focus moves to the view's
   * heading once it is drawn, so keyboard and screen-reader users start at the top of what they asked for.
   */
  function placeFocus() {
    if (!state.focusView) { return; }
    state.focusView = false;
    var heading = $(state.view === "login" ? "login-title" : state.view === "team" ? "team-title" : "agent-title");
    if (heading) { heading.focus(); }
  }

  /** The tab's title: how many agents need attention, then the view ("2 dead · Agents · Lifeline"). */
  function renderTitle() {
    var parts = [];
    if (state.view !== "login" && state.key) {
      var n = {};
      state.agents.forEach(function (a) { if (TROUBLED[a.status]) { n[a.status] = (n[a.status] || 0) + 1; } });
      var need = [];
      if (n.dead) { need.push(n.dead + " dead"); }
      if (n.dead_failed_revive) { need.push(n.dead_failed_revive + " unrecoverable"); }
      if (n.restarting) { need.push(n.restarting + " restarting"); }
      if (need.length) { parts.push(need.join(", ")); }
    }
    if (state.view === "login") { parts.push("Sign in"); }
    else if (state.view === "team") { parts.push("Agents"); }
    else if (state.view === "agent") { parts.push(state.agent ? name(state.agent) + " (" + label(state.agent.status) + ")" : "Agent"); }
    parts.push("Lifeline");
    var title = parts.join(" \u00b7 ");
    if (document.title !== title) { document.title = title; }
  }

  // ---- announcements ------------------------------------------------------------------------------------

  /**
   * One polite message per poll at most, for the changes worth hearing: an agent died, needs a decision
   * (its revive gave up), or recovered. Nothing on the first poll after sign-in (the title says it).
   */
  function announceChanges(agents) {
    var before = state.seen;
    state.seen = {};
    agents.forEach(function (a) { state.seen[a.agentId] = a.status; });
    if (!before) { return; }
    var died = [], decide = [], back = [];
    agents.forEach(function (a) {
      var was = before[a.agentId];
      if (!was || was === a.status) { return; }
      if (a.status === "dead") { died.push(name(a)); }
      else if (a.status === "dead_failed_revive") { decide.push(name(a)); }
      else if (TROUBLED[was] && (a.status === "ready" || a.status === "working")) { back.push(name(a)); }
    });
    var parts = [];
    if (died.length) { parts.push(list(died) + (died.length === 1 ? " died." : " died.")); }
    if (decide.length) { parts.push(list(decide) + " could not be revived and " + (decide.length === 1 ? "needs" : "need") + " a decision."); }
    if (back.length) { parts.push(list(back) + (back.length === 1 ? " recovered." : " recovered.")); }
    if (parts.length) { announce(parts.join(" ")); }
  }

  function list(names) {
    if (names.length > 3) { return names.length + " agents (" + names.slice(0, 3).join(", ") + " and more)"; }
    return names.length === 1 ? names[0] : names.slice(0, -1).join(", ") + " and " + names[names.length - 1];
  }

  function announce(message) {
    var box = $("announcer");
    // The same words twice in a row are still a new message: a no-break space makes the text differ.
    box.textContent = box.textContent === message ? message + "\u00a0" : message;
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
    }).then(function () { state.polling = false; placeFocus(); });
  }

  // ---- the team's agents, a page at a time ----------------------------------------------------------------

  /** The pages shown and every troubled agent, read whole; and the time to ask changes from, the server's. */
  function loadRoster() {
    var r = state.roster;
    var asks = [api("/agents?limit=" + PAGE * r.pages, true)];
    Object.keys(TROUBLED).forEach(function (s) { asks.push(api("/agents?status=" + s + "&limit=" + PAGE, true)); });
    if (!r.since) { asks.push(api("/agents?changedSince=" + encodeURIComponent(new Date(0).toISOString()) + "&limit=1", true)); }
    return Promise.all(asks).then(function (res) {
      var byId = {};
      res.slice(0, 1 + Object.keys(TROUBLED).length).forEach(function (page) {
        (page.agents || []).forEach(function (a) { byId[a.agentId] = a; });
      });
      if (!r.since) { r.since = res[res.length - 1].nextChangedSince; }
      r.byId = byId;
      r.more = !!res[0].nextCursor && r.pages < MAX_PAGES;
      r.at = Date.now();
      r.version++;
    });
  }

  /** Every POLL_MS: the agents whose status changed since the last ask, merged in; the pages again every PAGE_MS. */
  function refreshRoster() {
    var r = state.roster;
    if (!r.since || Date.now() - r.at >= PAGE_MS) { return loadRoster(); }
    return api("/agents?changedSince=" + encodeURIComponent(r.since) + "&limit=" + CHANGES, true).then(function (c) {
      if (c.truncated) { r.at = 0; return loadRoster(); }
      (c.agents || []).forEach(function (a) {
        var was = r.byId[a.agentId];
        if (!was || was.status !== a.status || was.heartbeatTs !== a.heartbeatTs) { r.version++; }
        r.byId[a.agentId] = a;
      });
      r.since = c.nextChangedSince || r.since;
    });
  }

  function rosterAgents() {
    var byId = state.roster.byId;
    return Object.keys(byId).map(function (id) { return byId[id]; });
  }

  function showMore() {
    var r = state.roster;
    if (r.pages >= MAX_PAGES) { return; }
    r.pages++;
    r.at = 0;
    refresh();
  }

  function refreshTeam() {
    show("team");
    var barDue = Date.now() - state.bar.at >= BAR_MS;
    var alertsOnly = state.alertsOnly;
    return Promise.all([refreshRoster(), alertsOnly ? api("/events?type=MassStaleSuspected&limit=25") : api("/events?limit=25"),
      barDue ? loadBar() : null]).then(function (res) {
      // Unchanged answers (304s give back the same objects) in the same minute: leave the page as it is, so a
      // selection or hover survives; tick() keeps the ages counting. Even when they changed, rows are updated
      // in place, never rebuilt, so reading position and focus survive a poll.
      if (unchanged(["team", state.roster.version, res[1], state.bar.version, barStart(), alertsOnly])) { return; }
      state.agents = rosterAgents();
      $("more-agents").hidden = !state.roster.more;
      announceChanges(state.agents);
      renderTitle();
      renderCounts();
      renderAgents();
      // A poll asked before the feed's filter changed draws no feed: the next one will.
      if (alertsOnly !== state.alertsOnly) { return; }
      $("events").setAttribute("data-mode", alertsOnly ? "alerts" : "all");
      renderEvents($("events"), alertsOnly ? alertEvents(res[1].events || []) : res[1].events || [],
        alertsOnly ? "No alerts in the last hour." : "No events yet.");
    });
  }

  // The team's maintenance pause, polled like the rest (a 304 when nothing changed).
  function refreshSettings() {
    return api("/settings").then(function (s) {
      state.settings = s;
      renderTeamPause();
      renderTeamHold();
    });
  }

  /**
   * Shown while self-preservation holds the team (how many agents, since when, why), with the admin's release; and
   * once released, until the silence ends. A hold one failure domain explained is no hold: its agents die. A
   * fleet-wide hold comes first (while it stands, the team's own flag is left as it was): the settings carry this
   * team's share of it, its own counts alone.
   */
  function holdBanner(s) {
    var f = s.fleetHold, h = s.hold;
    if (f && f.held) {
      return { release: true, text: "Fleet-wide self-preservation hold: Lifeline may be unable to hear agents across "
        + "the fleet, so no agent of any team is marked dead. " + (f.staleAgents === 0
          ? "None of this team's " + f.aliveAgents + " agents is silent now"
          : f.staleAgents + " of this team's " + f.aliveAgents + " agents are held") + ", since " + time(f.since) + "." };
    }
    if (h && h.held) {
      return { release: true, text: "Self-preservation hold: " + h.staleAgents + " of " + h.aliveAgents
        + " agents silent since " + time(h.since) + " — " + (h.why || "held")
        + ". None of them is marked dead while it holds." };
    }
    if (f && f.releasedAt) {
      return { release: false, text: "Released from the fleet-wide hold at " + time(f.releasedAt) + ": this team's "
        + f.staleAgents + " silent agents are marked dead as the sweep judges them, while the hold stands for the "
        + "rest of the fleet (since " + time(f.since) + ")." };
    }
    if (h && h.releasedAt) {
      return { release: false, text: "Hold released at " + time(h.releasedAt) + ": the " + h.staleAgents
        + " agents silent since " + time(h.since) + " are marked dead as the sweep judges them." };
    }
    return null;
  }

  function renderTeamHold() {
    var b = state.key && state.settings ? holdBanner(state.settings) : null;
    var text = b ? b.text : "";
    if ($("team-hold-text").textContent !== text) { $("team-hold-text").textContent = text; }
    $("hold-release").hidden = !(b && b.release);
    $("team-hold").hidden = !b;
  }

  /** The admin's release of the hold: its answer is shown in the banner; a refusal never signs out. */
  function releaseHold() {
    $("hold-release").disabled = true;
    post("/hold/release").then(function (r) {
      var b = r.body || {};
      if (r.ok) {
        state.settings = b;
        return "Released: the silent agents are marked dead as judged.";
      }
      if (r.status === 401 || r.status === 403) {
        return "Not allowed (" + r.status + (b.code ? " " + b.code : "") + "): releasing a hold needs an admin key.";
      }
      return "Not released (" + r.status + (b.code ? " " + b.code : "") + "): " + (b.error || "no reason given");
    }, function () {
      return "The API could not be reached; the hold may still stand.";
    }).then(function (text) {
      $("hold-release").disabled = false;
      $("hold-result").textContent = text;
      renderTeamHold();
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
    // Context-limit errors of the hour (each one asks for a session rotation): a marker on the agent's row.
    var rotations = api("/events?type=SessionRotationRequested&limit=" + BAR_LIMIT + "&since="
      + encodeURIComponent(new Date(start).toISOString()), true).then(function (body) {
      var per = {};
      (body.events || []).forEach(function (e) { var id = (e.detail || {}).agentId; if (id) { per[id] = (per[id] || 0) + 1; } });
      var sig = JSON.stringify(per);
      if (sig !== bar.rotationsSig) { bar.rotations = per; bar.rotationsSig = sig; bar.version++; }
    });
    return Promise.all([page(null, 0), rotations]).then(function () {
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

  /** The count tiles: buttons that filter the table (pressed while their filter is on), made once, updated in place. */
  function renderCounts() {
    var counts = {};
    state.agents.forEach(function (a) { counts[a.status] = (counts[a.status] || 0) + 1; });
    var box = $("counts");
    if (!box.firstChild) {
      box.appendChild(el("button", { type: "button", className: "count", "data-status": "all" }, [
        el("span", { className: "n" }), el("span", { text: "agents" })]));
      ORDER.forEach(function (s) {
        box.appendChild(el("button", { type: "button", className: "count", "data-status": s }, [
          el("span", { className: "n" }), badge(s)]));
      });
    }
    var filter = $("status-filter").value;
    Array.prototype.forEach.call(box.children, function (b) {
      var s = b.getAttribute("data-status");
      setText(b.querySelector(".n"), String(s === "all" ? state.agents.length : counts[s] || 0));
      setAttr(b, "aria-pressed", String(s === "all" ? !filter : filter === s));
    });
  }

  /** Restarts (changes to RESTARTING) in the last hour, per agent, from the bar's status changes. */
  function restartsByAgent(changes) {
    var out = {};
    Object.keys(changes).forEach(function (id) {
      out[id] = changes[id].filter(function (c) { return c.to === "restarting"; }).length;
    });
    return out;
  }

  /** The host daemon's own restarts of the agent in the last hour (stats.restartsLastHour, as its batch reported). */
  function daemonRestarts(a) { return (a.stats && a.stats.restartsLastHour) || 0; }

  /** Restarts in the last hour: the revive flow's (changes to RESTARTING in the bar) and the host daemon's own. */
  function restartsOf(a, restarts) {
    return (restarts[a.agentId] || 0) + daemonRestarts(a);
  }

  /**
   * The restart marker: the count, "(flapping)" from FLAPPING_RESTARTS on, and when its host daemon restarted it,
   * the daemon's restarts next to the revive flow's.
   */
  function restartsText(a, restarts) {
    var r = restartsOf(a, restarts), d = daemonRestarts(a);
    return "\u21BB " + r + (r === 1 ? " restart" : " restarts") + " in the last hour"
      + (r >= FLAPPING_RESTARTS ? " (flapping)" : "")
      + (d ? ": " + d + " by its host daemon, " + (restarts[a.agentId] || 0) + " by the revive flow" : "");
  }

  function triage(a, restarts) {
    if (TRIAGE[a.status] !== undefined) { return TRIAGE[a.status]; }
    return a.flapping || restartsOf(a, restarts) >= FLAPPING_RESTARTS ? 3 : 4;
  }

  function agentHref(agentId) { return "#agent/" + encodeURIComponent(agentId); }

  /** A new row: its cells are filled by updateRow. The name is a real link (a tab stop with its own URL). */
  function newRow(a) {
    var tr = el("tr", { className: "agent", "data-agent-id": a.agentId }, [
      el("td", { className: "name", "data-label": "Agent" }, [
        el("a", { className: "agent-link", href: agentHref(a.agentId) }),
        el("div", { className: "muted id", text: a.agentId }), el("div", { className: "markers" })]),
      el("td", { className: "status", "data-label": "Status" }, [badge(a.status), el("span", { className: "until muted" })]),
      el("td", { className: "age", "data-label": "Last heartbeat" }),
      el("td", { className: "deadline", "data-label": "Deadline" }),
      el("td", { className: "misses", "data-label": "Misses" }),
      el("td", { className: "task", "data-label": "Task" }),
      el("td", { className: "host", "data-label": "Host" }),
      el("td", { className: "hour", "data-label": "Last hour" })
    ]);
    // The whole row answers a mouse click too; the link is what the keyboard and screen readers use.
    tr.addEventListener("click", function (ev) {
      if (!ev.target.closest("a")) { location.hash = agentHref(a.agentId); }
    });
    return tr;
  }

  function cell(tr, cls) { return tr.querySelector("td." + cls); }

  function updateRow(tr, a, changes, restarts) {
    setAttr(tr, "data-status", a.status);
    setAttr(tr, "data-paused", paused(a) ? "true" : null);
    setText(tr.querySelector("a.agent-link"), name(a));
    // Markers: a crash loop (restarts in the last hour) and reported errors (a context limit among them).
    var marks = [];
    if (restartsOf(a, restarts)) { marks.push({ cls: "restarts", text: restartsText(a, restarts) }); }
    // Flagged flapping by the service (docs/alerts-noise.md): its deaths and recoveries reach people as one notice.
    if (a.flapping) { marks.push({ cls: "flapping", text: "\u21AF flapping since " + clock(a.flapping.since) }); }
    // Stalled (docs/liveness.md): in a turn with no progress past its threshold, alive all the same.
    // Parked (docs/liveness.md): at its provider's usage limit until the reset, alive all the same.
    if (a.alive && a.parked) { marks.push({ cls: "stalled", text: "\u23F8 parked until " + clock(a.parked.until) + " (" + a.parked.reason + ")" }); }
    if (a.alive && a.stalled) { marks.push({ cls: "stalled", text: "\u23F8 stalled since " + clock(a.stalled.since) + " (" + a.stalled.reason + ")" }); }
    var ctx = state.bar.rotations[a.agentId] || 0;
    if (ctx) {
      marks.push({ cls: "errors", text: "\u26A0 " + ctx + (ctx === 1 ? " context-limit error" : " context-limit errors") + " in the last hour" });
    }
    var box = tr.querySelector(".markers");
    var sig = marks.map(function (m) { return m.cls + ":" + m.text; }).join("|");
    if (box.getAttribute("data-sig") !== sig) {
      box.setAttribute("data-sig", sig);
      box.textContent = "";
      marks.forEach(function (m) { box.appendChild(el("span", { className: "marker " + m.cls, text: m.text })); });
    }
    // Status: a paused agent shows PAUSED and until when (its status in the title), else its status.
    var shown = paused(a) ? "paused" : a.status;
    var b = cell(tr, "status").querySelector(".badge");
    setAttr(b, "class", "badge status-" + shown);
    setAttr(b, "data-status", shown);
    setText(b, shown === "paused" ? "PAUSED" : label(a.status));
    setAttr(b, "title", shown === "paused" ? "Status " + label(a.status) + ", paused for maintenance" : null);
    setText(cell(tr, "status").querySelector(".until"), shown === "paused" ? "until " + clock(a.pausedUntil)
      : waitingText(a));
    var ageTd = cell(tr, "age");
    setAttr(ageTd, "data-ts", a.heartbeatTs || "");
    setText(ageTd, age(a.heartbeatTs));
    var dl = cell(tr, "deadline");
    if (paused(a)) {
      setAttr(dl, "data-deadline", null);
      setAttr(dl, "title", a.pauseReason || null);
      setText(dl, "paused until " + clock(a.pausedUntil));
    } else {
      setAttr(dl, "title", null);
      setAttr(dl, "data-deadline", (a.alive && a.deadline) || "");
      setText(dl, until(a.alive ? a.deadline : null));
    }
    setText(cell(tr, "misses"), String(a.consecutiveMisses || 0));
    setText(cell(tr, "task"), a.currentTaskId || "\u2013");
    setText(cell(tr, "host"), a.hostId || "\u2013");
    var hour = cell(tr, "hour");
    var bar = lastHour(a, changes);
    var old = hour.firstChild;
    if (!old || old.getAttribute("data-sig") !== bar.getAttribute("data-sig")) {
      if (old) { hour.replaceChild(bar, old); } else { hour.appendChild(bar); }
    }
  }

  /**
   * The table, trouble first (dead, unrecoverable, restarting, flapping, then the rest, each by name). Rows are
   * kept per agent and updated in place; a row moves only when its place in that order changed.
   */
  function renderAgents() {
    var filter = $("status-filter").value;
    var body = $("agent-rows");
    var changes = changesByAgent();
    var restarts = restartsByAgent(changes);
    var shown = state.agents.filter(function (a) { return !filter || a.status === filter; });
    shown.sort(function (x, y) {
      return triage(x, restarts) - triage(y, restarts) || name(x).localeCompare(name(y)) || x.agentId.localeCompare(y.agentId);
    });
    var keep = {};
    shown.forEach(function (a, i) {
      var tr = state.rows[a.agentId] || (state.rows[a.agentId] = newRow(a));
      keep[a.agentId] = true;
      updateRow(tr, a, changes, restarts);
      var at = body.children[i];
      if (at !== tr) { body.insertBefore(tr, at || null); }
    });
    Object.keys(state.rows).forEach(function (id) {
      if (!keep[id]) {
        var tr = state.rows[id];
        if (tr.parentNode) { tr.parentNode.removeChild(tr); }
        if (!state.agents.some(function (a) { return a.agentId === id; })) { delete state.rows[id]; }
      }
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
    var bar = el("div", { className: "hourbar", role: "img", "aria-label": "Last hour: " + summary(slots),
      "data-sig": clock(new Date(start).toISOString()) + "|" + slots.join(",") });
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

  /** The alerts of the last hour, newest first: deaths from the bar's status changes, and mass-stale suspicions. */
  function alertEvents(massStale) {
    var all = massStale.slice();
    Object.keys(state.bar.events).forEach(function (id) {
      if (isAlert(state.bar.events[id])) { all.push(state.bar.events[id]); }
    });
    all.sort(function (x, y) { return Date.parse(y.at) - Date.parse(x.at) || (y.eventId < x.eventId ? -1 : 1); });
    return all.slice(0, 25);
  }

  function renderEvents(list, events, none) {
    // Unchanged (the same events in the same order): left alone, so reading position survives a poll.
    var sig = events.map(function (e) { return e.eventId; }).join("|") + "|" + (none || "");
    if (list.getAttribute("data-sig") === sig) { return; }
    list.setAttribute("data-sig", sig);
    list.textContent = "";
    events.forEach(function (e) {
      var d = e.detail || {};
      var who = d.agentId || d.fromAgentId || d.aboutAgentId || d.keyId;
      list.appendChild(el("li", { "data-event-id": e.eventId, "data-type": e.type, className: isAlert(e) ? "alert" : "" }, [
        el("span", { className: "muted when", text: time(e.at) }),
        el("span", { className: "type", text: e.type }),
        who ? el("span", { text: who }) : null,
        d.to ? badge(d.to) : null,
        d.trigger ? el("span", { className: "muted", text: d.trigger }) : null,
        d.reason || d.message ? el("span", { className: "muted", text: d.reason || d.message }) : null
      ]));
    });
    if (!events.length) { list.appendChild(el("li", { className: "muted", text: none || "No events yet." })); }
  }

  function facts(dl, pairs) {
    dl.hidden = false;
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
    // The team's agents too (a 304 when unchanged): the tab's title counts the agents needing attention, and
    // a death elsewhere is announced on this page as well.
    return Promise.all([api(base), api(base + "/transitions?limit=50"), api(base + "/revivals"),
      api("/events?limit=20&agentId=" + encodeURIComponent(agentId)), refreshRoster()]).then(function (res) {
      if (unchanged(["agent", agentId, state.roster.version].concat(res.slice(0, 4)))) { return; }
      state.agents = rosterAgents();
      announceChanges(state.agents);
      var a = res[0];
      state.agent = a;
      renderTitle();
      renderRevive();
      var title = $("agent-title");
      var heading = name(a) + " " + label(a.status);
      if (title.textContent !== heading) {
        title.textContent = "";
        title.appendChild(document.createTextNode(name(a) + " "));
        title.appendChild(badge(a.status));
      }
      var ageEl = el("span", { className: "age", "data-ts": a.heartbeatTs || "", text: age(a.heartbeatTs) });
      var err = a.lastError;
      facts($("agent-facts"), [["Id", a.agentId], ["Role", a.role], ["Host", a.hostId], ["Last heartbeat", ageEl],
        ["Deadline", a.alive ? time(a.deadline) : undefined], ["Misses", a.consecutiveMisses], ["Grace misses", a.graceMisses],
        ["Stale after", a.staleAfterSeconds + "s"], ["Schedule", a.schedule && a.schedule + (a.timeZone ? " (" + a.timeZone + ")" : "")],
        ["Task", a.currentTaskId], ["Waiting", waitingText(a) || undefined],
        ["Parked", a.alive && a.parked ? "until " + time(a.parked.until) + " (" + a.parked.reason + ")" : undefined],
        ["Stalled", a.alive && a.stalled ? "since " + time(a.stalled.since) + " (" + a.stalled.reason + ")" : undefined],
        ["Last progress", a.alive && a.lastProgressAt ? time(a.lastProgressAt) : undefined],
        ["Subagents", a.subagents ? (a.subagents.length + (a.subagentsMore || 0)) + " running: " + a.subagents.map(function (r) {
          return r.id + (r.type ? " (" + r.type + ")" : "") + " since " + time(r.since); }).join(", ") : undefined],
        ["Paused until", a.pausedUntil && time(a.pausedUntil)], ["Pause reason", a.pauseReason],
        ["Registered", time(a.registeredAt)], ["Errors reported", a.errorsReported], ["Last error", err && (err.category + ": " + err.message + " (" + time(err.at) + ")")],
        ["Session rotations", a.sessionRotations]]);
      var s = a.stats || {};
      facts($("agent-stats"), [["Messages", s.messagesProcessed], ["Tool calls", s.toolCallsExecuted],
        ["Errors", s.errorsEncountered], ["Uptime", s.uptime !== undefined ? duration(s.uptime) : undefined]]);
      $("agent-stats").hidden = !$("agent-stats").childNodes.length;
      $("no-stats").hidden = !$("agent-stats").hidden;
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

  function dead(a) { return a && (a.status === "dead" || a.status === "dead_failed_revive"); }

  /** A revive asks the agent's host to restart it: offered only to a dead agent that has a host (else 409 NO_HOST). */
  function revivable(a) { return dead(a) && !!a.hostId; }

  /**
   * The revive controls of the agent page: offered while the agent is dead and has a host, the last answer kept in
   * view. A dead agent with no host gets the reason and what to do instead of a button that could only fail.
   */
  function renderRevive() {
    var a = state.agent, rv = state.revive;
    var offer = revivable(a) || rv.busy;
    var why = $("revive-unavailable");
    why.hidden = offer || !dead(a);
    setText(why, why.hidden ? "" : "No revive here: " + name(a) + " has no host, so no host can be asked to "
      + "restart it. Start it again yourself, or run it under \u201clifeline daemon\u201d, which gives it a host "
      + "and restarts it; it is back when it joins.");
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
    if ($("revive-confirm").hidden || state.revive.busy) { return; }
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
      // The confirmation that held the focus is gone: the answer takes it (and, as a status, is read out).
      $("revive-result").focus();
      state.polling = false;
      refresh();
    });
  }

  // A summary, never the contents: a checkpoint can be kilobytes of an agent's private state.
  function renderCheckpoint(c) {
    var dl = $("agent-checkpoint");
    $("no-checkpoint").hidden = !!c;
    if (!c) {
      dl.textContent = "";
      dl.hidden = true;
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
    state.bar = { events: {}, newest: 0, known: 0, version: 0, at: 0, rotations: {}, rotationsSig: "" };
    state.settings = null;
    state.drawn = [];
    state.seen = null;
    state.focusView = true;
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
    state.seen = null;
    state.agents = [];
    state.roster = { byId: {}, pages: 1, more: false, since: null, at: 0, version: 0 };
    renderTeamPause();
    $("hold-result").textContent = "";
    renderTeamHold();
    show("login");
    placeFocus();
  }

  function start() {
    if (state.timer) { clearInterval(state.timer); }
    state.timer = setInterval(refresh, POLL_MS);
    refresh();
  }

  /**
   * A sign-in link, {@code /#team=T&key=K} (Local prints one): the key rides in the fragment, which a browser never
   * sends to a server or puts in a Referer, and the page clears it from the address bar and the history entry at
   * once (replaceState), before anything else runs. Answers true when the link signed in.
   */
  function signInFromLink() {
    var h = location.hash || "";
    if (!/^#(?:.*&)?key=/.test(h)) { return false; }
    var params = new URLSearchParams(h.slice(1));
    history.replaceState(null, "", location.pathname + location.search);
    var team = (params.get("team") || "").trim(), key = (params.get("key") || "").trim();
    if (!team || !key) { return false; }
    signIn(team, key);
    return true;
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("login-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      signIn($("team-input").value.trim(), $("key-input").value.trim());
    });
    $("sign-out").addEventListener("click", function () { signOut(null); });
    $("status-filter").addEventListener("change", function () { renderCounts(); renderAgents(); });
    $("counts").addEventListener("click", function (ev) {
      var c = ev.target.closest(".count");
      if (c) {
        $("status-filter").value = c.getAttribute("data-status") === "all" ? "" : c.getAttribute("data-status");
        renderCounts();
        renderAgents();
      }
    });
    $("alerts-only").addEventListener("change", function () {
      state.alertsOnly = $("alerts-only").checked;
      state.polling = false;
      refresh();
    });
    // Escape cancels the revive confirmation (from anywhere on the page while it is open).
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && !$("revive-confirm").hidden) { ev.preventDefault(); cancelRevive(); }
    });
    $("back-link").addEventListener("click", function (ev) { ev.preventDefault(); location.hash = ""; });
    $("home-link").addEventListener("click", function (ev) { ev.preventDefault(); location.hash = ""; });
    $("more-agents").addEventListener("click", showMore);
    $("revive-button").addEventListener("click", askRevive);
    $("revive-no").addEventListener("click", cancelRevive);
    $("revive-yes").addEventListener("click", revive);
    $("hold-release").addEventListener("click", releaseHold);
    window.addEventListener("hashchange", function () {
      if (signInFromLink()) { return; }
      applyStatusLink();
      state.focusView = true;
      resetRevive();
      state.polling = false;
      refresh();
    });
    setInterval(tick, 1000);
    var team = sessionStorage.getItem("lifeline.team");
    var key = sessionStorage.getItem("lifeline.key");
    if (signInFromLink()) { return; }
    applyStatusLink();
    if (team && key) { state.team = team; state.key = key; start(); } else { signOut(null); }
  });
})();
