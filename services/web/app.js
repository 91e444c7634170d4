// The browser table (docs/WEB.md): plain ES modules, no build step, no other origin.
// Screens by the URL's fragment: #/ (start), #/lobby, #/game/ID (a seat: its token is
// kept in localStorage), #/join/ID (a shared table), #/watch/ID (a spectator),
// #/replay/ID (a finished game, its deals checked), #/again/ID (a new game like ID).

import { api } from "./api.js";
import { errorText, h, num, plural, store, stored, STRENGTHS } from "./dom.js";
import { replayScreen } from "./replay.js";
import { closeTable, tableScreen } from "./table.js";

const $app = document.getElementById("app");
const params = new URLSearchParams(location.search);

// house-bot pace (the header's select; ?pace= wins) and the four-colour deck, kept
{
  const $pace = document.getElementById("pace");
  const chosen = params.get("pace") ?? localStorage.getItem("glintwick.pace") ?? "800";
  if (![...$pace.options].some((o) => o.value === chosen)) $pace.append(h("option", { value: chosen }, `${chosen} ms`));
  $pace.value = chosen;
  $pace.addEventListener("change", () => localStorage.setItem("glintwick.pace", $pace.value));
  if (localStorage.getItem("glintwick.fourColour")) document.body.classList.add("four-colour");
  if (params.get("mayi")) localStorage.setItem("glintwick.mayI", params.get("mayi"));
}

function screen(title, ...children) {
  document.title = `${title} · Glintwick`;
  $app.replaceChildren(...children);
}

// ------------------------------------------------------------------ start screen

// dev options (docs/WEB.md): ?rounds=N plays the preset's first N contracts only, as a
// custom rule set (&from=K starts at the K-th, &deal=N deals N cards a round, &turnCap=N
// ends a round after N completed turns, &players=N lowers the minimum seats);
// ?seed=HEX deals a chosen seed
async function rulesFor(name) {
  const rounds = num(params.get("rounds"));
  if (!rounds) return { ruleSetName: name };
  const { ruleSets } = await api.ruleSets();
  const preset = { ...ruleSets.find((r) => r.name === name) };
  delete preset.hash;
  const from = Math.max(1, num(params.get("from")) || 1) - 1;
  preset.contracts = preset.contracts.slice(from, from + rounds);
  if (params.get("turnCap")) preset.turnCap = num(params.get("turnCap"));
  if (params.get("deal")) preset.contracts = preset.contracts.map((c) => ({ ...c, deal: num(params.get("deal")) }));
  if (params.get("players")) preset.minPlayers = num(params.get("players"));
  return { customRuleSet: preset };
}

// a game against house bots has no May I? deadline: only the person answers late, and
// nobody waits on them but bots (the round summary holds play while they read); a table
// for friends gives each window 20 s
async function createAndJoin(rules, seats, strength, withBots, name) {
  const body = { ...rules, seats, deadlines: { claimSeconds: withBots ? 0 : 20 } };
  // a chosen seed deals hands its chooser can know: for games against house bots
  // only, never a table friends join (docs/WEB.md, "Dev options")
  if (params.get("seed") && withBots) body.seed = params.get("seed");
  if (withBots) {
    body.bots = {};
    for (let seat = 1; seat < seats; seat++) body.bots[seat] = strength;
  }
  const game = await api.createGame(body);
  const joined = await api.join(game.gameId, { seat: 0, name });
  store(game.gameId, { seat: joined.seat, token: joined.token, strength });
  location.hash = `#/game/${game.gameId}`;
}

function startScreen() {
  const status = h("p", { role: "status", class: "status" });
  const name = h("input", { id: "name", name: "name", autocomplete: "nickname", maxlength: "40", value: localStorage.getItem("glintwick.name") || "" });
  const rules = h("select", { id: "rules", name: "rules" },
    h("option", { value: "whiskertrail" }, "Whiskertrail (2–4 players, eight stops)"),
    h("option", { value: "contract" }, "Contract rummy (4 seats, seven rounds, May I?)"));
  const seats = h("select", { id: "seats", name: "seats" },
    h("option", { value: "2" }, "2"), h("option", { value: "3" }, "3"), h("option", { value: "4", selected: true }, "4"));
  const strength = h("select", { id: "strength", name: "strength" },
    ...STRENGTHS.map(([v, t]) => h("option", { value: v, selected: v === "greedy" }, t)));
  const syncSeats = () => {
    const contract = rules.value === "contract";
    seats.disabled = contract && !params.get("players");
    if (contract && !params.get("players")) seats.value = "4";
  };
  rules.addEventListener("change", syncSeats);
  syncSeats();

  async function create(withBots) {
    status.textContent = "Creating the table…";
    localStorage.setItem("glintwick.name", name.value);
    try {
      await createAndJoin(await rulesFor(rules.value), num(seats.value), strength.value, withBots, name.value);
    } catch (e) {
      status.textContent = `Could not create the table. ${errorText(e)}`;
    }
  }

  const form = h("form", { class: "panel start", "aria-labelledby": "start-title", onsubmit: (e) => { e.preventDefault(); create(true); } },
    h("h1", { id: "start-title" }, "Play a free match"),
    h("p", {}, "No sign-up. Empty seats are played by house bots."),
    h("div", { class: "field" }, h("label", { for: "rules" }, "Rule set"), rules),
    h("div", { class: "field" }, h("label", { for: "name" }, "Your name"), name),
    h("div", { class: "field" }, h("label", { for: "seats" }, "Seats"), seats),
    h("div", { class: "field" }, h("label", { for: "strength" }, "House-bot strength"), strength),
    h("div", { class: "buttons" },
      h("button", { type: "submit", id: "play-bots" }, "Play against house bots"),
      h("button", { type: "button", id: "open-table", class: "secondary", onclick: () => create(false) }, "Open a table for friends")),
    status);
  screen("New game", form, lobbyPanel(name));
  name.focus();
}

// "Play again": a new game against house bots like the one that ended (its rule set,
// seats and bots' strength)
async function playAgain(id) {
  screen("Play again", h("p", { role: "status" }, "Opening a new table…"));
  try {
    const old = await api.getGame(id);
    const rules = { ...old.ruleSet };
    delete rules.hash;
    const bot = (old.seatInfo.find((x) => x.bot) || {}).bot || (stored(id) || {}).strength || "greedy";
    const body = ["whiskertrail", "contract"].includes(rules.name) && !num(params.get("rounds")) ? { ruleSetName: rules.name } : { customRuleSet: rules };
    await createAndJoin(body, old.seats, bot, true, localStorage.getItem("glintwick.name") || "");
  } catch (e) {
    screen("Play again", h("section", { class: "panel" }, h("h1", {}, "Could not open a new table"), h("p", {}, errorText(e)), h("a", { href: "#/" }, "Start a new game")));
  }
}

// ------------------------------------------------------------------ lobby

function lobbyPanel(nameInput) {
  const list = h("ul", { class: "lobby", "aria-label": "Open tables" });
  const status = h("p", { role: "status" }, "Looking for open tables…");
  async function refresh() {
    try {
      const { games = [] } = await api.lobby();
      status.textContent = games.length ? `${plural(games.length, "open table")}.` : "No open tables right now.";
      list.replaceChildren(...games.map((g) => h("li", {},
        h("span", {}, `${g.ruleSetName} · ${g.seats - g.seatsFree} of ${g.seats} seated · `,
          (g.seatInfo || []).filter((x) => x.joined).map((x) => x.name || `seat ${x.seat + 1}`).join(", ")),
        h("button", { type: "button", onclick: () => joinTable(g.gameId, nameInput ? nameInput.value : "") }, `Join table ${g.gameId.slice(0, 6)}`))));
    } catch (e) {
      status.textContent = `The lobby could not be read. ${errorText(e)}`;
    }
  }
  refresh();
  return h("section", { class: "panel", "aria-labelledby": "lobby-title" },
    h("h2", { id: "lobby-title" }, "Lobby"), status, list,
    h("button", { type: "button", class: "secondary", onclick: refresh }, "Refresh the lobby"));
}

function cannotJoin(id, text) {
  screen("Join", h("section", { class: "panel" }, h("h1", {}, "You cannot join this table"), h("p", { id: "join-refused" }, text),
    h("p", {}, h("a", { href: `#/watch/${id}`, id: "watch-instead" }, "Watch the table instead"), " · ", h("a", { href: "#/" }, "Start a game of your own"))));
}

async function joinTable(id, name) {
  if (stored(id)) { location.hash = `#/game/${id}`; return; }
  try {
    const joined = await api.join(id, { name: name || localStorage.getItem("glintwick.name") || "" });
    store(id, { seat: joined.seat, token: joined.token });
    location.hash = `#/game/${id}`;
  } catch (e) {
    cannotJoin(id, errorText(e));
  }
}

// a shared link (#/join/ID): a name and "Take a seat" while a seat is free; a full
// table says so and offers to watch
async function joinScreen(id) {
  if (stored(id)) { location.hash = `#/game/${id}`; return; }
  screen("Join a table", h("p", { role: "status" }, "Looking at the table…"));
  let game;
  try { game = await api.getGame(id); } catch (e) { cannotJoin(id, errorText(e)); return; }
  const free = game.seatInfo.filter((x) => !x.joined).length;
  if (!free) { cannotJoin(id, "This table is full: every seat is taken."); return; }
  const name = h("input", { id: "join-name", autocomplete: "nickname", maxlength: "40", value: localStorage.getItem("glintwick.name") || "" });
  screen("Join a table", h("form", { class: "panel", onsubmit: (e) => { e.preventDefault(); localStorage.setItem("glintwick.name", name.value); joinTable(id, name.value); } },
    h("h1", {}, "Join a table"),
    h("p", {}, `A ${game.ruleSet.name} table with ${plural(free, "free seat")}.`),
    h("div", { class: "field" }, h("label", { for: "join-name" }, "Your name"), name),
    h("div", { class: "buttons" }, h("button", { type: "submit", id: "take-seat" }, "Take a seat"), h("a", { href: `#/watch/${id}` }, "or watch"))));
}

// ------------------------------------------------------------------ routing

function route() {
  closeTable();
  $app.focus({ preventScroll: true });
  document.body.classList.remove("at-table");
  const [, what, id] = (location.hash.replace(/^#\/?/, "/") || "/").split("/");
  if ((what === "game" || what === "watch") && id) {
    const watch = what === "watch";
    if (!watch && !stored(id)) { joinScreen(id); return; }
    const root = h("div", { class: "table" });
    screen(watch ? "Watching" : "Your table", root);
    document.body.classList.add("at-table");
    tableScreen(root, id, { watch });
  } else if (what === "join" && id) joinScreen(id);
  else if (what === "replay" && id) replayScreen(screen, id);
  else if (what === "again" && id) playAgain(id);
  else if (what === "lobby") screen("Lobby", lobbyPanel(null));
  else startScreen();
}

window.addEventListener("hashchange", route);
route();
