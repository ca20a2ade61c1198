/** A value the format could not convert to its member's type; validation reports it on the member. */
export class UnreadableValue {
  constructor(
    /** What the client sent, for the message. */
    readonly raw: unknown,
    /** Json.NET's reader itself failed on it, and the legacy reported the whole record as well. */
    readonly failsRecord = false,
    /** The member's name as the client spelled it, where that keys the legacy's report. */
    readonly sentName?: string,
    /**
     * The member sent after it, as spelled, which Json.NET's reader lost after failing here: the
     * legacy reported it instead of the whole record.
     */
    readonly lostName?: string,
  ) {}

  /** The same value, reported under the member's name as the client spelled it. */
  sentAs(name: string): UnreadableValue {
    return new UnreadableValue(this.raw, this.failsRecord, name, this.lostName);
  }

  /** The same value, followed by a member the reader lost. */
  losing(name: string): UnreadableValue {
    return new UnreadableValue(this.raw, this.failsRecord, this.sentName, name);
  }
}
