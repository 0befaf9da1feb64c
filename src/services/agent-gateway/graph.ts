/**
 * Workflow graphs (spec E "orchestration definitions"; README "Workflows"): nodes of ten types joined by directed
 * edges, checked before a definition is saved and again before it is published.
 *
 * Node types: `start` (exactly one), `end` (one or more; its `input` template shapes the run's output), `agent` {agentId, input?}, `team` {teamId, input?},
 * `condition` {condition} with one `on: "true"` and one `on: "false"` edge, `join` (waits for every incoming
 * edge), `approval` {title?} with `on: "approved"` / `on: "rejected"` edges, `timer` {delaySeconds}, `signal`
 * {signal} (waits for a signal of that name), `subrun` {definitionId, input?} (runs another published workflow).
 * Rules: edges join existing nodes (no dangling edges), no cycles, every node reachable from the start, an end
 * reachable from every node; only a join takes more than one incoming edge.
 */
import { conditionProblems, jsonTemplateProblems } from './templates.ts';

/** The node types. */
export const NODE_TYPES = [
  'start',
  'end',
  'agent',
  'team',
  'condition',
  'join',
  'approval',
  'timer',
  'signal',
  'subrun',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** One node of a graph (the fields of its type; others are refused). */
export interface GraphNode {
  id: string;
  type: NodeType;
  agentId?: string;
  teamId?: string;
  definitionId?: string;
  input?: unknown;
  condition?: unknown;
  title?: string;
  delaySeconds?: number;
  signal?: string;
}

/** A directed edge; `on` labels the branches of a condition (`true`/`false`) or an approval (`approved`/`rejected`). */
export interface GraphEdge {
  from: string;
  to: string;
  on?: 'true' | 'false' | 'approved' | 'rejected';
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

const NODE_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** The fields each node type may carry besides `id` and `type` (required ones first). */
const FIELDS: Record<NodeType, { required: string[]; optional: string[] }> = {
  start: { required: [], optional: [] },
  end: { required: [], optional: ['input'] },
  agent: { required: ['agentId'], optional: ['input'] },
  team: { required: ['teamId'], optional: ['input'] },
  condition: { required: ['condition'], optional: [] },
  join: { required: [], optional: [] },
  approval: { required: [], optional: ['title'] },
  timer: { required: ['delaySeconds'], optional: [] },
  signal: { required: ['signal'], optional: [] },
  subrun: { required: ['definitionId'], optional: ['input'] },
};
/** The most nodes and edges of one graph. */
export const MAX_NODES = 100;
export const MAX_EDGES = 300;
/** The longest timer (a year). */
export const MAX_DELAY_SECONDS = 31_536_000;

type Edges = Map<string, GraphEdge[]>;

/** The problems of node `i`; a well-formed node is added to `byId`. */
function nodeProblems(raw: unknown, i: number, byId: Map<string, GraphNode>): string[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [`node ${i}: must be an object`];
  const node = raw as Record<string, unknown>;
  const id = node.id;
  if (typeof id !== 'string' || !NODE_ID.test(id))
    return [`node ${i}: id must be a letter then up to 63 letters, digits, _ or -`];
  const problems: string[] = [];
  if (byId.has(id)) problems.push(`node ${i}: id '${id}' is used twice`);
  if (!NODE_TYPES.includes(node.type as NodeType))
    return [...problems, `node '${id}': type must be one of ${NODE_TYPES.join(', ')}`];
  const type = node.type as NodeType;
  const fields = FIELDS[type];
  for (const key of Object.keys(node))
    if (key !== 'id' && key !== 'type' && !fields.required.includes(key) && !fields.optional.includes(key))
      problems.push(`node '${id}': a ${type} node has no field '${key}'`);
  for (const key of fields.required)
    if (node[key] === undefined) problems.push(`node '${id}': a ${type} node needs '${key}'`);
  for (const key of ['agentId', 'teamId', 'definitionId', 'signal', 'title']) {
    const value = node[key];
    if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 200))
      problems.push(`node '${id}': '${key}' must be a string of 1-200 characters`);
  }
  const delay = node.delaySeconds;
  if (
    type === 'timer' &&
    (!Number.isInteger(delay) || (delay as number) < 1 || (delay as number) > MAX_DELAY_SECONDS)
  )
    problems.push(`node '${id}': delaySeconds must be an integer from 1 to ${MAX_DELAY_SECONDS}`);
  if (type === 'condition') problems.push(...conditionProblems(node.condition, `node '${id}' condition`));
  if (node.input !== undefined)
    for (const p of jsonTemplateProblems(node.input)) problems.push(`node '${id}' input: ${p}`);
  byId.set(id, node as unknown as GraphNode);
  return problems;
}

/** The problems of edge `i`; a well-formed edge is added to `outgoing` and `incoming`. */
function edgeProblems(
  raw: unknown,
  i: number,
  byId: Map<string, GraphNode>,
  outgoing: Edges,
  incoming: Edges,
): string[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return [`edge ${i}: must be an object {from, to, on?}`];
  const edge = raw as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(edge))
    if (!['from', 'to', 'on'].includes(key)) problems.push(`edge ${i}: has no field '${key}'`);
  for (const end of ['from', 'to'] as const)
    if (typeof edge[end] !== 'string' || !byId.has(edge[end] as string))
      problems.push(`edge ${i}: '${String(edge[end])}' (${end}) is not a node of the graph`);
  if (problems.length > 0) return problems;
  const from = byId.get(edge.from as string)!;
  const labels =
    from.type === 'condition' ? ['true', 'false'] : from.type === 'approval' ? ['approved', 'rejected'] : [];
  if (labels.length > 0 && !labels.includes(edge.on as string))
    problems.push(
      `edge ${i}: an edge from ${from.type} '${from.id}' needs on: ${labels.map((l) => `"${l}"`).join(' or ')}`,
    );
  if (labels.length === 0 && edge.on !== undefined)
    problems.push(`edge ${i}: only edges from condition and approval nodes take 'on'`);
  const e = edge as unknown as GraphEdge;
  outgoing.set(e.from, [...(outgoing.get(e.from) ?? []), e]);
  incoming.set(e.to, [...(incoming.get(e.to) ?? []), e]);
  return problems;
}

/** The problems of each node's edges: start, end, join, condition and approval rules. */
function shapeProblems(node: GraphNode, ins: GraphEdge[], outs: GraphEdge[]): string[] {
  const problems: string[] = [];
  if (node.type === 'start' && ins.length > 0)
    problems.push(`the start node '${node.id}' has incoming edges`);
  if (node.type === 'end' && outs.length > 0) problems.push(`the end node '${node.id}' has outgoing edges`);
  if (node.type !== 'end' && outs.length === 0) problems.push(`node '${node.id}' has no outgoing edge`);
  if (node.type === 'join' && ins.length < 2)
    problems.push(`the join '${node.id}' needs at least two incoming edges`);
  if (node.type !== 'join' && ins.length > 1)
    problems.push(`node '${node.id}' has ${ins.length} incoming edges: only a join takes more than one`);
  if (node.type === 'condition') {
    const on = outs.map((e) => e.on).sort();
    if (on.length !== 2 || on[0] !== 'false' || on[1] !== 'true')
      problems.push(`the condition '${node.id}' needs one "true" and one "false" edge`);
  }
  if (node.type === 'approval') {
    if (!outs.some((e) => e.on === 'approved'))
      problems.push(`the approval '${node.id}' needs an "approved" edge`);
    const labels = outs.map((e) => e.on);
    if (new Set(labels).size !== labels.length)
      problems.push(`the approval '${node.id}' has two edges of one decision`);
  }
  return problems;
}

/** The ids reachable from `from` following `next` (`pick` names the next node of an edge). */
function reachable(from: string[], next: Edges, pick: (e: GraphEdge) => string): Set<string> {
  const seen = new Set(from);
  const stack = [...from];
  while (stack.length > 0)
    for (const e of next.get(stack.pop()!) ?? []) {
      const id = pick(e);
      if (!seen.has(id)) {
        seen.add(id);
        stack.push(id);
      }
    }
  return seen;
}

/** The flow problems: a cycle, nodes the start does not reach, nodes that reach no end. */
function flowProblems(
  byId: Map<string, GraphNode>,
  outgoing: Edges,
  incoming: Edges,
  start: string,
): string[] {
  // Kahn's algorithm: every node sorted means no cycle.
  const indegree = new Map([...byId.keys()].map((id) => [id, (incoming.get(id) ?? []).length]));
  const queue = [...byId.keys()].filter((id) => indegree.get(id) === 0);
  let sorted = 0;
  while (queue.length > 0) {
    const id = queue.pop()!;
    sorted += 1;
    for (const e of outgoing.get(id) ?? []) {
      indegree.set(e.to, indegree.get(e.to)! - 1);
      if (indegree.get(e.to) === 0) queue.push(e.to);
    }
  }
  if (sorted !== byId.size) return ['the graph has a cycle: workflows are acyclic'];
  const fromStart = reachable([start], outgoing, (e) => e.to);
  const ends = [...byId.values()].filter((n) => n.type === 'end').map((n) => n.id);
  const toEnd = reachable(ends, incoming, (e) => e.from);
  const problems: string[] = [];
  for (const id of byId.keys()) {
    if (!fromStart.has(id)) problems.push(`node '${id}' cannot be reached from the start`);
    if (!toEnd.has(id)) problems.push(`no end can be reached from node '${id}'`);
  }
  return problems;
}

/**
 * Every problem of `value` as a graph, in words ("edge 2: 'x' is not a node"); empty when it is a valid graph.
 * References (agents, teams, definitions of the scope) are checked by the caller.
 */
export function graphProblems(value: unknown): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return ['the graph must be an object {nodes, edges}'];
  const { nodes, edges } = value as { nodes?: unknown; edges?: unknown };
  if (!Array.isArray(nodes) || nodes.length === 0 || nodes.length > MAX_NODES)
    return [`nodes must be a list of 1-${MAX_NODES} nodes`];
  if (!Array.isArray(edges) || edges.length > MAX_EDGES)
    return [`edges must be a list of at most ${MAX_EDGES} edges`];
  const byId = new Map<string, GraphNode>();
  const problems = nodes.flatMap((raw, i) => nodeProblems(raw, i, byId));
  if (problems.length > 0) return problems;
  const starts = [...byId.values()].filter((n) => n.type === 'start');
  if (starts.length !== 1) problems.push(`the graph needs exactly one start node (it has ${starts.length})`);
  if (![...byId.values()].some((n) => n.type === 'end')) problems.push('the graph needs an end node');
  const outgoing: Edges = new Map();
  const incoming: Edges = new Map();
  problems.push(...edges.flatMap((raw, i) => edgeProblems(raw, i, byId, outgoing, incoming)));
  if (problems.length > 0) return problems;
  for (const node of byId.values())
    problems.push(...shapeProblems(node, incoming.get(node.id) ?? [], outgoing.get(node.id) ?? []));
  if (problems.length > 0) return problems;
  problems.push(...flowProblems(byId, outgoing, incoming, starts[0]!.id));
  if (problems.length > 0) return problems;
  // A condition reads `nodes.<id>` of nodes that run before it only (never a later or a parallel one).
  for (const node of byId.values())
    if (node.type === 'condition') {
      const before = reachable([node.id], incoming, (e) => e.from);
      before.delete(node.id);
      problems.push(...conditionProblems(node.condition, `node '${node.id}' condition`, { nodeIds: before }));
    }
  return problems;
}

/** A checked graph with its edges indexed. */
export class GraphIndex {
  readonly nodes = new Map<string, GraphNode>();
  readonly outgoing = new Map<string, GraphEdge[]>();
  readonly incoming = new Map<string, GraphEdge[]>();
  readonly start: GraphNode;

  constructor(readonly graph: Graph) {
    for (const n of graph.nodes) this.nodes.set(n.id, n);
    for (const e of graph.edges) {
      this.outgoing.set(e.from, [...(this.outgoing.get(e.from) ?? []), e]);
      this.incoming.set(e.to, [...(this.incoming.get(e.to) ?? []), e]);
    }
    this.start = graph.nodes.find((n) => n.type === 'start')!;
  }

  node(id: string): GraphNode {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`node ${id} is not in the graph`);
    return node;
  }
}

/** The one-node graph of a run of an agent or a team: start -> the target -> end. */
export function singleNodeGraph(type: 'agent' | 'team', targetId: string): Graph {
  return {
    nodes: [
      { id: 'start', type: 'start' },
      type === 'agent'
        ? { id: 'agent', type: 'agent', agentId: targetId }
        : { id: 'team', type: 'team', teamId: targetId },
      { id: 'end', type: 'end' },
    ],
    edges: [
      { from: 'start', to: type },
      { from: type, to: 'end' },
    ],
  };
}
