// A Map that forgets its oldest entries past a size limit, so no client can grow the sandbox's memory
// without bound (Map keeps insertion order, so the first key is the oldest).

export class BoundedMap<K, V> extends Map<K, V> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override set(key: K, value: V): this {
    super.set(key, value);
    while (this.size > this.#limit) {
      const oldest = this.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    return this;
  }

  /** Removes every entry for which `isStale` answers true. */
  sweep(isStale: (value: V) => boolean): void {
    for (const [key, value] of this) if (isStale(value)) this.delete(key);
  }
}
