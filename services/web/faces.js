// Card faces drawn as SVG (crisp at any size): the rank and suit in the corner, a large
// suit in the middle; the colours come from style.css (two- or four-colour deck).

import { s, h } from "./dom.js";
import { SUITS, cardLabel, isJoker, rankOf, rankText, standsForFace, standsForLabel, suitOf } from "./cards.js";

// one card as an image named by what it is (or, for a joker in a meld, what it stands for)
export function cardImage(card, { standsFor, className = "", ...attrs } = {}) {
  const code = card.code;
  const label = standsFor && isJoker(code) ? `joker standing for ${standsForLabel(standsFor)}` : cardLabel(code);
  return h("span", { class: `card ${className}`.trim(), role: "img", "aria-label": label, "data-code": code, ...attrs },
    cardSvg(code), standsFor && isJoker(code) ? h("span", { class: "stands", "aria-hidden": "true" }, `=${standsForFace(standsFor)}`) : null);
}

export function cardSvg(code) {
  if (isJoker(code)) {
    return s("svg", { viewBox: "0 0 50 70", class: "face joker", "aria-hidden": "true", focusable: "false" },
      s("rect", { class: "paper", x: 0.5, y: 0.5, width: 49, height: 69, rx: 5 }),
      s("text", { x: 4, y: 15, class: "rank" }, "JK"),
      s("text", { x: 25, y: 48, class: "pip", "text-anchor": "middle" }, "★"));
  }
  const suit = suitOf(code);
  const rank = rankText(rankOf(code));
  return s("svg", { viewBox: "0 0 50 70", class: `face suit-${suit}`, "aria-hidden": "true", focusable: "false" },
    s("rect", { class: "paper", x: 0.5, y: 0.5, width: 49, height: 69, rx: 5 }),
    s("text", { x: 4, y: 17, class: "rank" }, rank),
    s("text", { x: 4, y: 31, class: "corner" }, SUITS[suit]),
    s("text", { x: 30, y: 58, class: "pip", "text-anchor": "middle" }, SUITS[suit]));
}

// the back of a card (the stock, another seat's hand)
export function cardBack(label = "") {
  return h("span", { class: "card back", role: label ? "img" : null, "aria-label": label || null, "aria-hidden": label ? null : "true" },
    s("svg", { viewBox: "0 0 50 70", "aria-hidden": "true", focusable: "false" },
      s("rect", { class: "back-paper", x: 0.5, y: 0.5, width: 49, height: 69, rx: 5 }),
      s("rect", { class: "back-inner", x: 5, y: 5, width: 40, height: 60, rx: 3 })));
}
