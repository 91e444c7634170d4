// The person's choices at the table: the draw, the contract (previewed before it is
// laid), the selected card's discard, extra melds, the end of a turn, the May I? prompt,
// a hint; and the contract's progress ("2 groups: you have 1").

import { api } from "./api.js";
import { cardFace, cardLabel, meldStandsFor, meldTitle } from "./cards.js";
import { capital, errorText, h, num, plural, seatName } from "./dom.js";
import { cardImage } from "./faces.js";
import { progressText } from "./progress.js";

export function legalNow(t) {
  if (!t.prompt || t.acting) return [];
  return t.prompt.legalActions || [];
}

function rulesOf(t) {
  const r = { ...t.game.ruleSet };
  delete r.hash;
  return r;
}

// the contract's progress: per requirement, how many the hand holds now ("2 groups:
// you have 1"), computed from the hand (progress.js) each time the hand changes
export function contractProgress(t) {
  const v = t.view;
  const me = v.players[t.seat];
  if (!me || v.gameOver) return null;
  if (me.opened) return h("span", { class: "progress done", id: "contract-progress" }, " · you have laid it ✓");
  if (!v.hand.length || !v.contract) return null;
  const key = `${v.round}:${v.hand.map((c) => c.id).sort((a, b) => a - b).join(",")}`;
  if (!t.progress || t.progress.key !== key) {
    t.progress = { key, text: progressText(v.hand.map((c) => c.code), v.contract, t.game.ruleSet) };
  }
  return t.progress.text ? h("span", { class: "progress", id: "contract-progress" }, ` · ${t.progress.text}`) : null;
}

async function showHint(t) {
  try {
    const a = await api.analyse({ customRuleSet: rulesOf(t), round: t.view.round, handIds: t.view.hand.map((c) => c.id) });
    if (a.feasible) t.hint = "Your hand can lay the contract now.";
    else if (a.missing === undefined) t.hint = "Your hand is far from the contract.";
    else t.hint = `You lack ${plural(num(a.missing), "card")}. These would help: ${(a.outs || []).map(cardFace).join(" ") || "none"}.`;
  } catch (e) {
    t.hint = `No hint: ${errorText(e)}`;
  }
  t.render();
}

function claimPanel(t, actions) {
  const v = t.view;
  const claim = actions.find((a) => a.claim);
  const pass = actions.find((a) => a.passClaim);
  const card = v.claim && v.claim.card ? v.claim.card : v.discardTop;
  const penalty = num(t.game.ruleSet.claimPenaltyCards);
  const deadline = num(t.prompt.deadlineUnix);
  const countdown = h("span", { class: "countdown", id: "claim-countdown" });
  const tick = () => {
    if (!countdown.isConnected && countdown.dataset.started) return;
    countdown.dataset.started = "1";
    const left = Math.max(0, Math.ceil(deadline - Date.now() / 1000));
    countdown.textContent = deadline ? `${left} s left` : "";
    if (deadline && left > 0) setTimeout(tick, 500);
  };
  tick();
  // a seat ahead of this one (in the window's priority order) that has claimed wins the card
  const answers = (v.claim && v.claim.answers) || [];
  const mineAt = answers.findIndex((a) => a.seat === t.seat);
  const ahead = answers.slice(0, mineAt < 0 ? 0 : mineAt).filter((a) => a.answer === "CLAIM_ANSWER_CLAIM");
  return h("div", { class: "claim", role: "group", "aria-labelledby": "claim-title" },
    h("h3", { id: "claim-title" }, "May I?"),
    h("p", {}, "Claim ", card ? cardImage(card) : "the discard", ` out of turn? It costs ${plural(penalty, "penalty card")} from the stock. `, countdown),
    t.useful ? h("p", { class: "ok" }, "This card completes your contract.") : null,
    ahead.length ? h("p", { id: "claimed-ahead", class: "warn" },
      `${capital(seatName(t.game, ahead[0].seat, t.seat))} has already claimed it and comes before you: it goes to them.`) : null,
    h("div", { class: "buttons" },
      pass ? h("button", { type: "button", id: "pass-claim", "data-key": "pass", "data-first": "", onclick: () => t.act(pass, "You passed.") }, "Pass") : null,
      claim ? h("button", { type: "button", id: "claim", class: "secondary", "data-key": "claim", onclick: () => t.act(claim, "You claimed the card.") }, "May I? Claim it") : null));
}

export function actionsPanel(t) {
  const v = t.view;
  const actions = legalNow(t);
  const section = h("section", { class: "actions", "aria-labelledby": "actions-title" });
  const current = v.current === t.seat ? "your move" : `${seatName(t.game, v.current, t.seat)} to play`;
  const waiting = v.gameOver ? "The game is over." : t.acting ? "Sending your move…" : t.paused ? "The next round waits for you." :
    v.phase === "PHASE_CLAIM" ? "A May I? window is open." : `Waiting: ${current}.`;
  const free = t.game.seatInfo.filter((x) => !x.joined).length;
  if (free && !v.gameOver) {
    // (the engine would take a move now, but nobody else could answer it yet)
    section.append(h("h2", { id: "actions-title" }, "The game starts when every seat is taken"));
    return section;
  }
  section.append(h("h2", { id: "actions-title" }, actions.length ? (v.phase === "PHASE_CLAIM" ? "Out of turn" : "Your move") : waiting));
  if (t.notice) section.append(h("p", { id: "notice", class: "notice", role: "status" }, t.notice));
  if (!actions.length) return section;
  if (v.phase === "PHASE_CLAIM") { section.append(claimPanel(t, actions)); return section; }
  const buttons = h("div", { class: "buttons" });
  for (const a of actions) {
    if (a.draw) {
      const fromDiscard = a.draw.source === "DRAW_SOURCE_DISCARD";
      buttons.append(h("button", { type: "button", id: fromDiscard ? "draw-discard" : "draw-stock", "data-key": fromDiscard ? "dd" : "ds",
        onclick: () => t.act(a, fromDiscard ? "You took the discard." : "You drew from the stock.") },
      fromDiscard ? `Take the ${v.discardTop ? cardLabel(v.discardTop.code) : "discard"}` : "Draw from the stock"));
    }
    if (a.layContract) buttons.append(h("button", { type: "button", id: "lay-contract", "data-key": "lay", onclick: () => previewContract(t, a) }, "Lay the contract…"));
    if (a.endTurn) buttons.append(h("button", { type: "button", id: "end-turn", "data-key": "end", onclick: () => t.act(a, "You ended your turn.") }, "End the turn"));
  }
  actions.filter((a) => a.extraMeld).forEach((a, i) => {
    const codes = a.extraMeld.meld.cards.map((id) => (v.hand.find((c) => c.id === id) || { code: "?" }).code);
    buttons.append(h("button", { type: "button", class: "extra-meld", "data-key": `extra-${i}`, onclick: () => t.act(a, "You laid a meld.") },
      `Lay ${codes.map(cardFace).join(" ")}`));
  });
  const sel = t.selected;
  if (sel !== null) {
    const card = v.hand.find((c) => c.id === sel);
    const discard = actions.find((a) => a.discard && a.discard.card === sel);
    if (discard) buttons.append(h("button", { type: "button", id: "discard", "data-key": "discard", onclick: () => t.act(discard, `You discarded the ${cardLabel(card.code)}.`) }, `Discard the ${card ? cardLabel(card.code) : ""}`));
  }
  buttons.append(h("button", { type: "button", id: "hint", class: "secondary", "data-key": "hint", onclick: () => showHint(t) }, "Hint"));
  section.append(buttons);
  if (t.preview) section.append(previewPanel(t));
  if (sel !== null) {
    const offs = actions.some((a) => (a.layOff && a.layOff.card === sel) || (a.swapJoker && a.swapJoker.card === sel));
    if (offs) section.append(h("p", { class: "muted" }, "Pick a meld on the table to lay it off on (or swap it for the joker)."));
  } else if (actions.some((a) => a.discard || a.layOff || a.swapJoker)) {
    section.append(h("p", { class: "muted" }, "Select a card in your hand to discard it, lay it off or swap it for a joker."));
  }
  if (t.hint) section.append(h("p", { id: "hint-text", role: "status" }, t.hint));
  return section;
}

async function previewContract(t, action) {
  try {
    const answer = await api.analyse({ customRuleSet: rulesOf(t), round: t.view.round, handIds: t.view.hand.map((c) => c.id), bestOnly: true });
    t.preview = { action, melds: answer.melds || [] };
  } catch (e) {
    t.preview = { action, melds: [], error: errorText(e) };
  }
  t.render();
  const confirm = document.getElementById("confirm-contract");
  if (confirm) confirm.focus();
}

function previewPanel(t) {
  const distinct = t.game.ruleSet.setDistinctSuits;
  return h("div", { class: "preview", role: "group", "aria-labelledby": "preview-title" },
    h("h3", { id: "preview-title" }, "The contract you will lay"),
    t.preview.error ? h("p", {}, `No preview: ${t.preview.error}`) : null,
    h("ul", { class: "melds" }, ...t.preview.melds.map((m) => {
      const stands = meldStandsFor(m, distinct);
      return h("li", { class: "meld", "aria-label": meldTitle(m) }, h("span", { class: "meld-cards" }, ...m.cards.map((c, i) => cardImage(c, { standsFor: stands[i] }))));
    })),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "confirm-contract", "data-key": "confirm", onclick: () => t.act(t.preview.action, "You laid the contract.") }, "Confirm: lay these melds"),
      h("button", { type: "button", id: "cancel-contract", class: "secondary", "data-key": "cancel", onclick: () => { t.preview = null; t.render(); } }, "Cancel")));
}
