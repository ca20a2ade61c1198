import { type WireClass, wireModelOf } from './wire-model';

/** The scalar members of a wire DTO, each present (null when missing): the shape of a matching row. */
export type WireScalarsOf<T> = {
  [K in keyof T as NonNullable<T[K]> extends readonly unknown[] ? never : K]-?: Exclude<
    T[K],
    undefined
  >;
};

/** Copies a row's members named as a wire model's scalar members: rows and DTOs share the wire names. */
export function pickWireScalars<T extends object>(
  type: WireClass<T>,
  row: object,
): WireScalarsOf<T> {
  const source = row as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const member of wireModelOf(type).members) {
    if (member.kind !== 'list') picked[member.name] = source[member.name] ?? null;
  }
  return picked as WireScalarsOf<T>;
}
