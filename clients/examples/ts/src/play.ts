// A typed client of Glintwick's HTTP face: its types are generated from the server's
// /openapi.json by openapi-typescript (src/glintwick.d.ts, not committed: see README.md)
// and its calls made by openapi-fetch. It compiles under `tsc --strict` with no cast;
// run, it creates a game, joins both seats, reads the phase, draws, and reads the
// reason of a refused (stale) move. `node dist/play.js http://127.0.0.1:8080`
import createClient from "openapi-fetch";
import type { components, paths } from "./glintwick.js";

type Schemas = components["schemas"];
type View = Schemas["glintwick.v1.View"];
type Event = Schemas["glintwick.v1.Event"];
type Action = Schemas["glintwick.v1.Action.Input"];
type Phase = View["phase"];
type Reason = Schemas["Error"]["reason"];

// ---- what the compiler checks about the generated types (each line fails to compile
// when a type is looser than it should be)
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const phaseIsItsEnum: Equal<
  Phase,
  "PHASE_UNSPECIFIED" | "PHASE_DRAW" | "PHASE_PLAY" | "PHASE_CLAIM" | "PHASE_GAME_OVER"
> = true;
const reasonIsAClosedSet: Equal<string extends Reason ? true : false, false> = true;
const staleIsAReason: Equal<"STALE_VERSION" extends Reason ? true : false, true> = true;
const answerIsItsEnum: Equal<
  Schemas["glintwick.v1.ClaimAnswerInfo"]["answer"],
  "CLAIM_ANSWER_UNSPECIFIED" | "CLAIM_ANSWER_CLAIM" | "CLAIM_ANSWER_PASS"
> = true;
const whyARoundEnded: Equal<
  Schemas["glintwick.v1.RoundEndedEvent"]["reason"],
  | "ROUND_END_REASON_UNSPECIFIED"
  | "ROUND_END_REASON_WENT_OUT"
  | "ROUND_END_REASON_EXHAUSTIONS"
  | "ROUND_END_REASON_TURN_CAP"
  | "ROUND_END_REASON_DRY"
  | "ROUND_END_REASON_DEAD"
> = true;
const stalemateIsItsEnum: Equal<
  Schemas["glintwick.v1.RuleSet"]["stalemate"],
  "STALEMATE_UNSPECIFIED" | "STALEMATE_EXHAUSTIONS" | "STALEMATE_DRY"
> = true;
const ownerIsASeat: Equal<Schemas["glintwick.v1.Meld"]["owner"], number | undefined> = true;
// an action is one kind: two at once do not compile
const draw: Action = { draw: { source: "DRAW_SOURCE_STOCK" } };
// @ts-expect-error a draw and a discard at once
const twoKinds: Action = { draw: {}, discard: { card: 1 } };
void [phaseIsItsEnum, reasonIsAClosedSet, staleIsAReason, answerIsItsEnum, whyARoundEnded];
void [stalemateIsItsEnum, ownerIsASeat, twoKinds];

// an event's type names its payload: narrowed by the type, the payload is there
function describe(event: Event): string {
  switch (event.type) {
    case "EVENT_TYPE_DREW":
      return `drew (stock ${event.drew.stockSize})`;
    case "EVENT_TYPE_ROUND_ENDED":
      return `round ${event.roundEnded.round} ended: ${event.roundEnded.reason}`;
    case "EVENT_TYPE_DISCARDED":
      return `discarded ${event.discarded.card?.code ?? "?"}`;
    default:
      return event.type;
  }
}

function fail(what: string, error: { code: string; reason: Reason; message: string } | undefined): never {
  throw new Error(`${what}: ${error ? `${error.code} ${error.reason} ${error.message}` : "no answer"}`);
}

async function main(baseUrl: string): Promise<void> {
  const client = createClient<paths>({ baseUrl });
  const created = await client.POST("/v1/games", { body: { ruleSetName: "whiskertrail", seats: 2 } });
  if (!created.data) fail("CreateGame", created.error);
  const gameId = created.data.gameId;
  const path = { game_id: gameId };
  const tokens = new Map<number, string>();
  for (const name of ["ann", "bob"]) {
    const joined = await client.POST("/v1/games/{game_id}:join", { params: { path }, body: { name } });
    if (!joined.data) fail("JoinGame", joined.error);
    tokens.set(joined.data.seat, joined.data.token);
  }
  const ann = tokens.get(0);
  if (ann === undefined) throw new Error("nobody took seat 0");
  const viewed = await client.GET("/v1/games/{game_id}/view", {
    params: { path },
    headers: { Authorization: `Bearer ${ann}` },
  });
  if (!viewed.data) fail("GetView", viewed.error);
  const view: View = viewed.data;
  const phase: Phase = view.phase;
  if (phase !== "PHASE_DRAW") throw new Error(`a new game waits for a draw, not ${phase}`);
  const token = tokens.get(view.current);
  if (token === undefined) throw new Error(`seat ${view.current} has no token`);
  const headers = { Authorization: `Bearer ${token}` };
  const body = { expectedVersion: view.version, requestId: `draw-${gameId}`, action: draw };
  const submitted = await client.POST("/v1/games/{game_id}:submit", { params: { path }, headers, body });
  if (!submitted.data) fail("SubmitAction", submitted.error);
  const told = submitted.data.events.map(describe);
  // the same version again, as a new request: refused, and its reason is typed
  const again = { ...body, requestId: `again-${gameId}` };
  const stale = await client.POST("/v1/games/{game_id}:submit", { params: { path }, headers, body: again });
  if (stale.data) throw new Error("a stale move was accepted");
  const reason: Reason = stale.error.reason;
  if (reason !== "STALE_VERSION") fail("a stale move", stale.error);
  console.log(JSON.stringify({ gameId, phase, version: submitted.data.version, told, reason }));
}

const base = process.argv[2];
if (base === undefined) throw new Error("usage: node dist/play.js BASE_URL");
await main(base);
