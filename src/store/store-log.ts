/** The log lines the store writes: the server passes its logger; the store needs no more of it than this. */
export interface StoreLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}
