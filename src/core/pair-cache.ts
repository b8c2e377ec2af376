/**
 * Values kept per pair of keys (a client id and a path, say) on a hot path: two Map lookups, no
 * key string built per lookup. Bounded: cleared when it already holds `max` pairs and a new one
 * comes, which is cheap and keeps what a busy server uses coming straight back.
 */
export class PairCache<V> {
  private readonly byFirst = new Map<string, Map<string, V>>();
  private pairs = 0;

  constructor(private readonly max: number) {}

  get(first: string, second: string): V | undefined {
    return this.byFirst.get(first)?.get(second);
  }

  clear(): void {
    this.byFirst.clear();
    this.pairs = 0;
  }

  set(first: string, second: string, value: V): void {
    let bySecond = this.byFirst.get(first);
    if (!bySecond?.has(second)) {
      if (this.pairs >= this.max) {
        this.clear();
        bySecond = undefined;
      }
      this.pairs++;
    }
    if (!bySecond) this.byFirst.set(first, (bySecond = new Map()));
    bySecond.set(second, value);
  }
}
