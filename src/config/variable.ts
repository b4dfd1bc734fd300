/**
 * The two kinds of setting configuration.ts declares: a variable, which the environment may set,
 * and a fixed setting, which only code (the tests) changes. A declaration's `fallback` is its value
 * when nothing sets it, so the type of every setting is the type of its declaration's fallback.
 */

/** How a variable's text is checked (a JSON schema, whose messages name the variable) and read. */
export interface Parser<T> {
  readonly schema: Readonly<Record<string, unknown>>;
  readonly read: (checked: unknown) => T;
}

/** Where docs/configuration.md and .env.example list a variable, in this order. */
export const SECTIONS = [
  "Server",
  "Database",
  "Replicas",
  "Limits",
  "Imports and exports",
  "Rules and events",
] as const;
export type Section = (typeof SECTIONS)[number];

/** A value that differs by the kind of store, resolved when the store is open (composition.ts). */
export type ByStore<T> = { readonly postgres: T; readonly embedded: T };

export interface Fixed<V> {
  readonly fallback: V;
}

export interface Variable<V> extends Fixed<V> {
  readonly name: string;
  readonly parser: Parser<unknown>;
  readonly section: Section;
  /** docs/configuration.md's text (Markdown); .env.example's comment. */
  readonly about: string;
  /** docs/configuration.md's Default cell when the variable is unset by default: "(unset)" unless told. */
  readonly shown?: string;
  /** The default by store; the setting is then undefined until the store is known. */
  readonly byStore?: ByStore<V>;
}

type Doc = { section: Section; about: string; shown?: string };

/** A variable with a default. */
export function variable<T>(name: string, parser: Parser<T>, fallback: T, doc: Doc): Variable<T> {
  return { name, parser, fallback, ...doc };
}

/** A variable with no default: unset, the setting is undefined. */
export function optional<T>(name: string, parser: Parser<T>, doc: Doc): Variable<T | undefined> {
  return { name, parser, fallback: undefined, ...doc };
}

/** A variable whose default depends on the store; unset, the setting is undefined. */
export function storeDependent<T>(
  name: string,
  parser: Parser<T>,
  byStore: ByStore<T>,
  doc: Doc,
): Variable<T | undefined> & { byStore: ByStore<T> } {
  return { name, parser, fallback: undefined, byStore, shown: "(by store)", ...doc };
}

/** A setting the environment does not set. */
export const fixed = <V>(fallback: V): Fixed<V> => ({ fallback });

export const integer = (minimum: number, maximum: number): Parser<number> => ({
  schema: { type: "integer", minimum, maximum },
  read: (value) => value as number,
});
export const boolean: Parser<boolean> = { schema: { type: "boolean" }, read: (value) => value as boolean };
export const text = (schema: Record<string, unknown>): Parser<string> => ({
  schema: { type: "string", ...schema },
  read: (value) => value as string,
});
export const oneOf = <T extends string>(values: readonly T[]): Parser<T> => ({
  schema: { type: "string", enum: values },
  read: (value) => value as T,
});

/** The settings a tree of declarations stands for. */
export type ValuesOf<D> = { -readonly [K in keyof D]: D[K] extends Fixed<infer V> ? V : ValuesOf<D[K]> };

const isDeclaration = (node: object): node is Fixed<unknown> => "fallback" in node;
export const isVariable = (node: Fixed<unknown>): node is Variable<unknown> => "name" in node;

/** Every variable of a tree, in declaration order. */
export function variablesOf(tree: object): Variable<unknown>[] {
  return Object.values(tree).flatMap((node: object) =>
    isDeclaration(node) ? (isVariable(node) ? [node] : []) : variablesOf(node),
  );
}

/** The tree's settings, each the value `pick` gives its declaration. */
export function valuesOf<D extends object>(tree: D, pick: (node: Fixed<unknown>) => unknown): ValuesOf<D> {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]: [string, object]) => [
      key,
      isDeclaration(node) ? pick(node) : valuesOf(node, pick),
    ]),
  ) as ValuesOf<D>;
}

/** The tree's settings when nothing sets them. */
export const defaultsOf = <D extends object>(tree: D): ValuesOf<D> => valuesOf(tree, (node) => node.fallback);
