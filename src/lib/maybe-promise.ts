/**
 * A port's answer that an in-process backend gives at once and a networked one later. Hot paths test
 * with isPromise and stay synchronous for the former: each await costs a promise and a microtask turn.
 */
export type MaybePromise<T> = T | Promise<T>;

export const isPromise = <T>(value: MaybePromise<T>): value is Promise<T> => value instanceof Promise;
