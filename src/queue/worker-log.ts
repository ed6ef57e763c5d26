/** The worker's parts all log under the context they logged under as one class, so log searches keep working. */
export const WORKER_LOG_CONTEXT = 'TaskWorker';
