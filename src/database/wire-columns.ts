import { Column, type ColumnOptions, getMetadataArgsStorage, type ValueTransformer } from 'typeorm';
import {
  DECIMAL_PRECISION,
  DECIMAL_SCALE,
  type WireClass,
  type WireScalarMember,
  wireModelOf,
  type WireScalarsOf,
} from '../wire';

/**
 * mysql2 returns DECIMAL as a string and SQLite as a number. Both become the number they spell; values
 * are written as text so neither driver rounds. Declared decimals have at most 15 significant digits,
 * so no value changes on the way through a double.
 */
export const decimalTransformer: ValueTransformer = {
  to: (value: unknown) => (typeof value === 'number' ? value.toString() : value),
  from: (value: unknown) => (typeof value === 'string' ? Number(value) : value),
};

export function columnOptionsFor(member: WireScalarMember): ColumnOptions {
  const nullable = !member.required;
  switch (member.kind) {
    case 'int':
      return { type: 'int', nullable };
    case 'decimal':
      return {
        type: 'decimal',
        // A member's own precision and scale are its column's, so nothing it accepts is rounded.
        precision: member.precision ?? DECIMAL_PRECISION,
        scale: member.scale ?? DECIMAL_SCALE,
        nullable,
        transformer: decimalTransformer,
      };
    case 'string':
      // TEXT on both databases: it holds a stored member's 4000 UTF-16 units in any script (at most
      // 12,000 bytes of utf8mb4) and counts 10 bytes of MySQL's 65,535-byte row limit; a VARCHAR(4000)
      // counts 16,002 (a transaction's 19 would need 304,038). InnoDB keeps either in the row while it
      // fits the page and moves the longest values off the page when it does not.
      return { type: 'text', nullable };
    case 'boolean':
      return { type: 'boolean', nullable };
    case 'date':
      return { type: 'datetime', precision: 3, nullable };
    case 'intOrText':
      // Its type varies with the value: a record holding one keeps it in a JSON column.
      throw new Error(`${member.name}: an integer-or-text member has no column of its own.`);
  }
}

/** The scalar members of a wire DTO as row properties: what `@WireColumns` adds to an entity. */
export type WireColumnsOf<T, Omitted extends keyof WireScalarsOf<T> = never> = Omit<
  WireScalarsOf<T>,
  Omitted
>;

/**
 * Adds a column for every scalar member of a wire DTO that the entity does not declare itself, named
 * and typed as on the wire. The DTO stays the one declaration of names, lengths and nullability.
 */
export function WireColumns(dto: WireClass): ClassDecorator {
  return (entity) => {
    const declared = new Set(
      getMetadataArgsStorage()
        .columns.filter((column) => column.target === entity)
        .map((column) => column.propertyName),
    );
    for (const member of wireModelOf(dto).members) {
      if (member.kind === 'list' || declared.has(member.name)) continue;
      Column(columnOptionsFor(member))(entity.prototype as object, member.name);
    }
  };
}
