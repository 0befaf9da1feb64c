import { type SchemaOptions, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * A string restricted to `values`, as JSON Schema `{type: "string", enum: [...]}` (one clear validation message,
 * "must be one of ...", where a TypeBox union of literals gives one message per literal).
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}
