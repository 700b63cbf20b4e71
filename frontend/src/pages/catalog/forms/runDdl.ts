// Running a create form's DDL as a statement: the job is followed until it ends; a FAILED job
// becomes an Error carrying the job's error code and message, and a success makes every catalog
// page, the tree and search answers load again.
import { useCallback } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { ApiError } from "../../../api";
import { invalidate } from "../../../data/queries";
import type { SessionSource } from "../../../data/statements";
import { runStatement } from "../sql";
import { useCreateSubmit } from "./shared";

/** How long a create statement is waited for in the request before the job is followed. */
const DDL_WAIT_SECONDS = 10;

/** Run one statement to its end (in ``sessions``, else the catalog pages' session); a job that
 * did not finish throws its error, a success makes the catalog pages load again. */
export function useRunDdl(sessions?: SessionSource): (sql: string) => Promise<void> {
  const client = useQueryClient();
  return useCallback(
    async (sql: string) => {
      const { job } = await runStatement(client, sql, DDL_WAIT_SECONDS, new AbortController().signal, sessions);
      if (job.status !== "FINISHED") {
        const error = job.error;
        throw new ApiError(400, {
          code: error?.code ?? job.status,
          message: error?.message ?? `The statement ended ${job.status}.`,
          details: (error?.details as Record<string, unknown> | undefined) ?? {},
        });
      }
      await invalidate(client, "catalogs");
    },
    [client, sessions],
  );
}

/** A create form's submit: run ``sql`` (in ``sessions``, else the catalog pages' session), then
 * open ``destination``. A failure is kept as ``error`` (the form marks its field) and the form
 * can be sent again. */
export function useDdlSubmit(sessions?: SessionSource): {
  busy: boolean;
  error: unknown;
  submit: (sql: string, destination: string) => Promise<void>;
} {
  const run = useRunDdl(sessions);
  return useCreateSubmit(async (sql: string, destination: string) => {
    await run(sql);
    return destination;
  });
}
