/**
 * Resolves `wait` early, with true, when `wake` is called; a call while nobody waits is kept for the
 * next wait.
 */
export class Wakeup {
  private pending = false;
  private resolve?: () => void;

  wake(): void {
    if (this.resolve) this.resolve();
    else this.pending = true;
  }

  wait(ms: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.resolve = undefined;
        resolve(woken);
      };
      const timer = setTimeout(() => done(false), ms);
      this.resolve = () => done(true);
    });
  }
}
