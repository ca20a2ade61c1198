/** A value the format could not convert to its member's type; validation reports it on the member. */
export class UnreadableValue {
  constructor(
    /** What the client sent, for the message. */
    readonly raw: unknown,
    /** Json.NET's reader itself failed on it, and the legacy reported the whole record as well. */
    readonly failsRecord = false,
    /** The member's name as the client spelled it, where that keys the legacy's report. */
    readonly sentName?: string,
  ) {}

  /** The same value, reported under the member's name as the client spelled it. */
  sentAs(name: string): UnreadableValue {
    return new UnreadableValue(this.raw, this.failsRecord, name);
  }
}
