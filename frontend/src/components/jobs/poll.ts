// Following a job until it ends, for any page that runs statements (editor, catalog).
import { ApiError, TERMINAL, enc, get, type Job } from "../../api";

/** Poll a job every `interval` ms until it is terminal (or the signal aborts). */
export async function pollJob(
  id: string,
  onUpdate: (job: Job) => void,
  signal: AbortSignal,
  interval = 400,
): Promise<Job> {
  for (;;) {
    let job: Job;
    try {
      job = await get<Job>(`/jobs/${enc(id)}`, { signal });
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) {
        await wait(interval * 3, signal);
        continue;
      }
      throw error;
    }
    onUpdate(job);
    if (TERMINAL.has(job.status)) return job;
    await wait(interval, signal);
  }
}

export const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new DOMException("aborted", "AbortError"));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new DOMException("aborted", "AbortError"));
    });
  });
