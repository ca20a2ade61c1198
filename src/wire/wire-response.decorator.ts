import { SetMetadata } from '@nestjs/common';
import { type WireClass } from './wire-model';

export const WIRE_RESPONSE = Symbol('wire:response');

export interface WireResponseOptions {
  readonly type: WireClass;
  /** The body is a collection: a JSON array, or `ArrayOf…` in XML. */
  readonly list: boolean;
}

/** Declares a route's body: the interceptor writes it in the negotiated format. */
export const WireResponse = (type: WireClass, options: { list?: boolean } = {}) =>
  SetMetadata(WIRE_RESPONSE, { type, list: options.list ?? false } satisfies WireResponseOptions);
