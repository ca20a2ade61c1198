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

export const strongEtagOf = (text: string) =>
  `"${createHash('sha1').update(text).digest('base64url')}"`;

/** The latest representation of each versioned body in each media type. */
export class RepresentationCache {
  private readonly entries = new Map<
    string,
    { version: number; representation: Promise<Representation> }
  >();

  get(
    body: VersionedBody<object>,
    mediaType: string,
    encode: (value: object) => string,
  ): Promise<Representation> {
    const key = `${body.key} ${mediaType}`;
    const cached = this.entries.get(key);
    if (cached && cached.version >= body.currentVersion) return cached.representation;
    // Concurrent misses share one load and one serialization.
    const representation = body.load().then(({ version, value }): Representation => {
      const text = encode(value);
      const built = { bytes: Buffer.from(text), etag: strongEtagOf(text) };
      this.entries.set(key, { version, representation: Promise.resolve(built) });
      return built;
    });
    representation.catch(() => this.entries.delete(key));
    this.entries.set(key, { version: body.currentVersion, representation });
    return representation;
  }
}
