// The table on screen: the person's seat at the bottom, the others around a felt table,
// the stock and discard pile in the middle, each seat's melds beside it, the hand large
// and overlapped; the log and the rules beside the table. Rendered from t (table.js).

import { api } from "./api.js";
import { cardLabel, describeContract, isJoker, meldStandsFor, meldTitle, sortCards } from "./cards.js";
import { capital, errorText, h, num, plural, seatName, stored, STRENGTHS } from "./dom.js";
import { gameEndPanel, roundEndPanel, rulesPanel } from "./ends.js";
import { cardBack, cardImage, cardSvg } from "./faces.js";
import { roundWord } from "./model.js";
import { actionsPanel, contractProgress, legalNow } from "./actions.js";

// where the other seats sit, by how many seats after the person's they come
const PLACES = { 1: [], 2: ["top"], 3: ["left", "right"], 4: ["left", "top", "right"] };

export function render(t) {
  if (t.closed || !t.root.isConnected) return;
  const focusedKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  if (!t.view || !t.game) {
    t.root.replaceChildren(t.error ? h("p", { class: "error", role: "alert" }, t.error) : h("p", { role: "status" }, "Connecting to the table…"));
    return;
  }
  if (!t.layout) {
    // the side column's log keeps its node (and scroll) across renders: lines are added, not redrawn
    t.felt = h("div", { class: "felt-area" });
    t.sideTop = h("div", { class: "side-top" });
    t.layout = [t.felt, h("aside", { class: "side", "aria-label": "Rules, options and the log" }, t.sideTop, t.log.panel(), t.linksLine = h("p", { class: "links" }))];
    t.root.replaceChildren(...t.layout);
  }
  document.documentElement.style.setProperty("--pace", `${Math.min(400, Math.max(120, num(document.getElementById("pace").value) * 0.6))}ms`);
  t.felt.replaceChildren(...feltParts(t).filter(Boolean));
  t.sideTop.replaceChildren(...[contractPanel(t), t.watch ? null : optionsPanel(t), rulesPanel(t)].filter(Boolean));
  linksLine(t);
  t.log.flush();
  const again = focusedKey ? t.root.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`) : null;
  if (again) again.focus({ preventScroll: true });
  else if (focusedKey || document.activeElement === document.body) {
    // the focused control went with the move: keyboard users land on the next choice
    // (in a May I? window on "Pass": a stray Enter must not claim)
    const next = t.root.querySelector("[data-first], .actions button, .round-end button, .game-end button");
    if (next && (t.prompt || t.roundEnd || t.gameEnd)) next.focus({ preventScroll: true });
  }
}

function feltParts(t) {
  const v = t.view;
  const n = v.players.length;
  const me = t.seat ?? 0;
  const others = [];
  for (let r = 1; r < n; r++) others.push(seatBox(t, (me + r) % n, (PLACES[n] || [])[r - 1] || "top"));
  const overlay = t.gameEnd ? gameEndPanel(t) : t.roundEnd ? roundEndPanel(t) : null;
  return [
    t.error ? h("p", { class: "error banner", role: "alert" }, t.error) : null,
    t.watch ? null : waitingPanel(t),
    h("section", { class: `felt seats-${n}`, "aria-labelledby": "board-title" },
      h("h2", { id: "board-title", class: "sr-only" }, "The table"),
      ...others,
      h("div", { class: "center" }, overlay || centerPile(t)),
      seatBox(t, me, "bottom")),
    // (the person's choices and hand: on a phone kept at the bottom of the screen, but
    // for a round's summary or the game's end, which then come first)
    t.watch ? null : h("div", { class: t.roundEnd || t.gameEnd ? "dock resting" : "dock" }, actionsPanel(t),
      t.heldView ? null : handPanel(t)), // (a refreshed summary: the next hand waits behind it)
  ];
}

function seatStatus(t, seat) {
  const v = t.view;
  if (v.gameOver) return "";
  if (v.phase === "PHASE_CLAIM" && v.claim) {
    if (seat === v.claim.discarder) return "discarded";
    const a = (v.claim.answers || []).find((x) => x.seat === seat);
    if (!a) return "";
    if (a.answer === "CLAIM_ANSWER_CLAIM") return "claims";
    if (a.answer === "CLAIM_ANSWER_PASS") return "passed";
    return "deciding";
  }
  return v.current === seat ? "to play" : "";
}

function seatBox(t, seat, place) {
  const v = t.view;
  const p = v.players[seat] || { handSize: 0, score: 0 };
  const status = seatStatus(t, seat);
  const last = v.lastMove && v.lastMove.seat === seat && v.lastMove.type !== "EVENT_TYPE_TURN_STARTED";
  const melds = v.table.filter((m) => m && m.owner === seat);
  const mine = seat === t.seat;
  const backs = Math.min(p.handSize, 12);
  return h("div", {
    class: `seat pos-${place}${status === "to play" || status === "deciding" ? " turn" : ""}${mine ? " me" : ""}${last ? " last" : ""}`,
    "data-seat": seat, "aria-current": status === "to play" ? "true" : null, role: "group", "aria-label": seatName(t.game, seat, t.seat),
  },
  h("div", { class: "seat-head" },
    h("strong", { class: "seat-name" }, seatName(t.game, seat, t.seat)),
    status ? h("span", { class: `badge badge-${status.replace(" ", "-")}` }, status) : null),
  h("div", { class: "seat-facts" },
    mine || t.watch ? null : h("span", { class: "backs", "aria-hidden": "true" }, ...Array.from({ length: backs }, () => cardBack())),
    h("span", {}, ` ${plural(p.handSize, "card")}`), " · ", h("span", {}, `score ${p.score}`),
    p.opened ? [" · ", h("span", { class: "opened" }, "contract laid")] : null),
  melds.length ? h("ul", { class: "melds", "aria-label": `${capital(seatName(t.game, seat, t.seat, { you: true }))}: melds` },
    ...melds.map((m) => meldItem(t, m))) : null);
}

function meldItem(t, m) {
  const stands = meldStandsFor(m, t.game.ruleSet.setDistinctSuits);
  const fresh = t.view.lastMove && (t.view.lastMove.melds || []).includes(m.index);
  return h("li", { class: `meld${fresh ? " fresh" : ""}`, "data-meld": m.index, "aria-label": `meld ${m.index + 1}: ${meldTitle(m)}` },
    h("span", { class: "meld-cards" }, ...m.cards.map((c, i) => cardImage(c, { standsFor: stands[i] }))),
    ...meldActions(t, m));
}

function meldActions(t, meld) {
  // the lay-offs and joker swaps of the selected card onto this meld
  const out = [];
  const held = t.view.hand.find((c) => c.id === t.selected);
  const name = held ? cardLabel(held.code) : "";
  for (const a of legalNow(t)) {
    if (a.layOff && a.layOff.meld === meld.index && a.layOff.card === t.selected) {
      const end = a.layOff.end === "RUN_END_LOW" ? " at the low end" : a.layOff.end === "RUN_END_HIGH" ? " at the high end" : "";
      out.push(h("button", { type: "button", class: "small", "data-key": `off-${meld.index}-${a.layOff.end}`, onclick: () => t.act(a, "Laid off.") },
        `Lay off ${name} here${end}`));
    }
    if (a.swapJoker && a.swapJoker.meld === meld.index && a.swapJoker.card === t.selected) {
      out.push(h("button", { type: "button", class: "small", "data-key": `swap-${meld.index}`, onclick: () => t.act(a, "Swapped the joker.") }, `Swap ${name} for the joker`));
    }
  }
  return out;
}

function centerPile(t) {
  const v = t.view;
  const landed = v.lastMove && v.lastMove.type === "EVENT_TYPE_DISCARDED";
  const taken = v.lastMove && (v.lastMove.type === "EVENT_TYPE_DREW" || v.lastMove.type === "EVENT_TYPE_CLAIM_AWARDED");
  return h("div", { class: "piles" },
    h("div", { class: `pile${taken ? " taken" : ""}`, id: "stock-pile" }, cardBack(`Stock, ${plural(v.stockSize, "card")}`),
      h("span", { class: "pile-name" }, "Stock"), h("span", { class: "pile-size" }, plural(v.stockSize, "card"))),
    h("div", { class: "pile", id: "discard-pile" },
      v.discardTop ? cardImage(v.discardTop, { className: landed ? "landed" : "" })
        : h("span", { class: "card empty" }, v.discardSize ? "?" : ""),
      h("span", { class: "pile-name" }, "Discard pile"), h("span", { class: "pile-size" }, plural(v.discardSize, "card"))),
    turnCounter(t));
}

// near the rule set's turn cap (the round's safety valve), how many turns are left
function turnCounter(t) {
  const cap = num(t.game.ruleSet.turnCap);
  const done = num(t.view.turnsCompleted);
  if (!cap || done < cap * 0.75) return null;
  return h("p", { class: "turn-counter", id: "turn-counter" }, `Turn ${done + 1} of ${cap}: the round ends at ${cap}.`);
}

function contractPanel(t) {
  const v = t.view;
  const rules = t.game.ruleSet;
  const contract = v.contract || { melds: [] };
  const asks = describeContract(contract, rules.exactContractSizes);
  const section = h("section", { class: "contract", "aria-labelledby": "contract-title" });
  const word = roundWord(v.rules);
  section.append(h("h2", { id: "contract-title" }, `${word} ${v.round} of ${v.rounds}${contract.name ? `: ${contract.name}` : ""}`),
    h("p", { class: "asks" }, capital(asks), t.watch ? null : contractProgress(t)));
  if (v.rules === "whiskertrail") {
    section.append(h("ol", { class: "route", "aria-label": "The route" }, ...(rules.contracts || []).map((c, i) => h("li", {
      class: i + 1 < v.round ? "done" : i + 1 === v.round ? "here" : "",
      "aria-current": i + 1 === v.round ? "step" : null,
    }, i + 1 < v.round ? "✓ " : "", c.name))));
  }
  section.append(h("p", { class: contract.discards === false ? "deal deal-note" : "deal" }, `Deal: ${contract.deal} cards${contract.discards === false ? " · no discards this round: end your turn instead" : ""}`));
  return section;
}

function optionsPanel(t) {
  const policy = h("select", { id: "may-i", "data-key": "may-i", onchange: (e) => { localStorage.setItem("glintwick.mayI", e.target.value); } },
    ...[["ask", "Ask me every time"], ["useful", "Pass unless it completes my contract"], ["never", "Never claim"]]
      .map(([value, text]) => h("option", { value, selected: value === (localStorage.getItem("glintwick.mayI") || "useful") }, text)));
  const four = h("input", { type: "checkbox", id: "four-colour", "data-key": "four", checked: document.body.classList.contains("four-colour"),
    onchange: (e) => { document.body.classList.toggle("four-colour", e.target.checked); localStorage.setItem("glintwick.fourColour", e.target.checked ? "1" : ""); } });
  const hasMayI = num(t.game.ruleSet.claimPenaltyCards) > 0 || t.game.ruleSet.name === "contract";
  return h("section", { class: "options", "aria-label": "Table options" },
    hasMayI ? h("div", { class: "field" }, h("label", { for: "may-i" }, "May I?"), policy) : null,
    h("div", { class: "field" }, four, h("label", { for: "four-colour" }, "Four-colour deck")));
}

function linksLine(t) {
  const watch = `${location.origin}/#/watch/${t.id}`;
  t.linksLine.replaceChildren("Spectator link: ", h("a", { href: watch, id: "watch-link" }, watch), t.connected ? "" : " · reconnecting…");
}

export function copyButton(text, id) {
  const button = h("button", { type: "button", class: "small", id, onclick: async () => {
    try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; } catch { button.textContent = "Select the link and copy it"; }
  } }, "Copy the link");
  return button;
}

function waitingPanel(t) {
  const free = t.game.seatInfo.filter((x) => !x.joined).length;
  if (!free) return null;
  const link = `${location.origin}/#/join/${t.id}`;
  const strength = h("select", { id: "fill-strength", "aria-label": "Strength of the bots that fill the table" },
    ...STRENGTHS.map(([v, l]) => h("option", { value: v, selected: v === ((stored(t.id) || {}).strength || "greedy") }, l)));
  return h("section", { class: "panel waiting", "aria-labelledby": "waiting-title" },
    h("h2", { id: "waiting-title" }, `Waiting for ${free === 1 ? "one more player" : `${free} more players`}`),
    h("p", {}, "Share this link with friends: ", h("a", { href: link, id: "share-link" }, link), " ", copyButton(link, "copy-share")),
    h("div", { class: "buttons" }, strength,
      h("button", { type: "button", id: "fill-bots", onclick: async () => {
        try { await api.fillWithBots(t.id, strength.value, t.token); t.game = await api.getGame(t.id); render(t); } catch (e) { t.error = errorText(e); render(t); }
      } }, "Fill the empty seats with bots")));
}

// ------------------------------------------------------------------ the hand

export function handInOrder(t) {
  const hand = t.view.hand;
  const byId = new Map(hand.map((c) => [c.id, c]));
  if (t.sort === "suit" || t.sort === "rank") {
    t.order = sortCards(hand, t.sort).map((c) => c.id); // (a drawn card goes to its place)
  } else {
    const kept = t.order.filter((id) => byId.has(id));
    const fresh = sortCards(hand.filter((c) => !kept.includes(c.id)), "suit").map((c) => c.id);
    t.order = [...kept, ...fresh];
  }
  sessionStorage.setItem(`glintwick.order.${t.id}`, JSON.stringify(t.order)); // (kept on refresh)
  return t.order.map((id) => byId.get(id));
}

function handPanel(t) {
  const v = t.view;
  const cards = handInOrder(t);
  const moves = new Map(); // card id -> the kinds of move it has now
  for (const a of legalNow(t)) {
    for (const k of ["discard", "layOff", "swapJoker"]) {
      if (!a[k]) continue;
      if (!moves.has(a[k].card)) moves.set(a[k].card, new Set());
      moves.get(a[k].card).add(k);
    }
  }
  const reorder = (from, to) => {
    const [id] = t.order.splice(from, 1);
    t.order.splice(to, 0, id);
    t.sort = "own"; // (the person's order: neither sort is active now)
    localStorage.setItem("glintwick.sort", "own");
    render(t);
  };
  const move = (id, by) => {
    const i = t.order.indexOf(id);
    if (i < 0 || i + by < 0 || i + by >= t.order.length) return;
    reorder(i, i + by);
  };
  const list = h("ul", { class: "hand", "aria-label": `Your hand, ${plural(cards.length, "card")}` }, ...cards.map((c, i) => {
    const can = moves.has(c.id);
    const button = h("button", {
      type: "button", class: `card${isJoker(c.code) ? " joker" : ""}${t.selected === c.id ? " chosen" : ""}${v.drawn === c.id ? " drawn" : ""}`,
      "aria-pressed": t.selected === c.id ? "true" : "false", "data-key": `card-${c.id}`, "data-card": c.id, "data-code": c.code, "data-moves": can ? [...moves.get(c.id)].join(" ") : "",
      "aria-disabled": can ? null : "true", draggable: "true",
      onclick: () => {
        if (!can) { t.notice = whyNot(t, c); t.selected = null; render(t); return; }
        t.notice = "";
        t.selected = t.selected === c.id ? null : c.id;
        render(t);
      },
      onkeydown: (e) => {
        if (e.altKey && e.key === "ArrowLeft") { e.preventDefault(); move(c.id, -1); }
        if (e.altKey && e.key === "ArrowRight") { e.preventDefault(); move(c.id, 1); }
      },
      ondragstart: (e) => { e.dataTransfer.setData("text/plain", String(c.id)); },
      ondragover: (e) => e.preventDefault(),
      ondrop: (e) => {
        e.preventDefault();
        const from = t.order.indexOf(Number(e.dataTransfer.getData("text/plain")));
        if (from >= 0) reorder(from, i);
      },
    }, cardSvg(c.code), h("span", { class: "sr-only" }, cardLabel(c.code)));
    return h("li", {}, button);
  }));
  const sorter = (mode, text) => h("button", { type: "button", class: "small", id: `sort-${mode}`, "data-key": `sort-${mode}`, "aria-pressed": t.sort === mode ? "true" : "false",
    onclick: () => { t.sort = mode; localStorage.setItem("glintwick.sort", mode); render(t); } }, text);
  return h("section", { class: "my-hand", "aria-labelledby": "hand-title" },
    h("div", { class: "hand-head" }, h("h2", { id: "hand-title" }, `Your hand · ${plural(cards.length, "card")}`),
      sorter("suit", "Sort by suit"), sorter("rank", "Sort by rank"),
      h("span", { class: "muted hint-line" }, "Drag a card, or Alt+←/→ on it, to move it.")),
    list);
}

// why a card clicked has no move now, in one line
export function whyNot(t, card) {
  const v = t.view;
  const name = cardLabel(card.code);
  if (v.gameOver) return "The game is over.";
  if (!t.prompt) return v.phase === "PHASE_CLAIM" ? "Wait: the May I? window is open." : `It is not your turn: ${seatName(t.game, v.current, t.seat)} plays now.`;
  if (t.prompt.view.phase === "PHASE_CLAIM") return "Answer the May I? first: claim the discard or pass.";
  if (t.prompt.view.phase === "PHASE_DRAW") return "Draw first: from the stock or the discard pile.";
  const taken = t.prompt.view.takenFromDiscard;
  if (taken && taken.id === card.id) return `You cannot discard the ${name} you just took from the discard pile.`;
  if (v.contract && v.contract.discards === false) return "No discards this round: lay your cards in melds, or end your turn.";
  if (!(v.players[t.seat] || {}).opened) return `The ${name} has no move now: it cannot be laid off before your contract is laid.`;
  return `The ${name} fits no meld on the table and cannot be discarded now.`;
}

// the table of a replay step: the contract and the felt, no hand and no choices
export function replayTable(t) {
  const v = t.view;
  const n = v.players.length;
  const others = [];
  for (let r = 1; r < n; r++) others.push(seatBox(t, r % n, (PLACES[n] || [])[r - 1] || "top"));
  return [contractPanel(t), h("section", { class: `felt seats-${n}`, "aria-label": "The table after this move" },
    ...others, h("div", { class: "center" }, centerPile(t)), seatBox(t, 0, "bottom"))];
}
