import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';

/** A body read at a version: what a snapshot of the data holds, and which version it is. */
export interface VersionedSnapshot<T> {
  readonly version: number;
  readonly value: T;
}

/**
 * A route's answer whose representations are serialized once per version of the data and then served
 * as cached bytes with a precomputed ETag. The route names the version the database holds now; the
 * loader reads the data and its version together, so a cached body never outlives its version.
 */
export class VersionedBody<T extends object> {
  constructor(
    readonly key: string,
    readonly currentVersion: number,
    readonly load: () => Promise<VersionedSnapshot<T>>,
  ) {}
}

export interface Representation {
  /** The bytes sent: encoded once, not on every response. */
  readonly bytes: Buffer;
  /** Strong: a hash of the bytes, so every instance serving the same data gives the same tag. */
  readonly etag: string;
}

/** A body's strong ETag, the same for its text and for that text's UTF-8 bytes. */
export const strongEtagOf = (body: string | Buffer) =>
  `"${createHash('sha1').update(body).digest('base64url')}"`;

/** How often a versioned body was served from the cache, and how often it was encoded again. */
export interface CacheLookups {
  hits: number;
  misses: number;
}

/** The latest representation of each versioned body in each media type and encoding. */
@Injectable()
export class RepresentationCache {
  private readonly entries = new Map<
    string,
    { version: number; representation: Promise<Representation> }
  >();
  /** By versioned body key (`requirements`): counted for the metrics. */
  readonly lookups = new Map<string, CacheLookups>();

  /** The body's representation in `variant`, its media type and encoding, encoded by `encode`. */
  get(
    body: VersionedBody<object>,
    variant: string,
    encode: (value: object) => Buffer,
  ): Promise<Representation> {
    const key = `${body.key} ${variant}`;
    const cached = this.entries.get(key);
    let lookups = this.lookups.get(body.key);
    if (!lookups) {
      lookups = { hits: 0, misses: 0 };
      this.lookups.set(body.key, lookups);
    }
    if (cached && cached.version >= body.currentVersion) {
      lookups.hits++;
      return cached.representation;
    }
    lookups.misses++;
    // Concurrent misses share one load and one serialization.
    const representation = body.load().then(({ version, value }): Representation => {
      const bytes = encode(value);
      const built = { bytes, etag: strongEtagOf(bytes) };
      this.entries.set(key, { version, representation: Promise.resolve(built) });
      return built;
    });
    representation.catch(() => this.entries.delete(key));
    this.entries.set(key, { version: body.currentVersion, representation });
    return representation;
  }
}
