const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id in the shape of the Task and session ids this service issues (any UUID version). */
export const isUuid = (value: string) => UUID.test(value);
