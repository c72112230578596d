/**
 * How long an entity instance (thread, run, worker) stays in memory after its
 * last message. Nothing of a thread's or a run's state lives in the instance
 * between messages: the database holds it, and a run's loop keeps its Start
 * request open while it executes, so an executing run is never evicted. An
 * idle instance only saves rebuilding its handlers on the next message.
 *
 * A runner holds at most effect's `maxResidentEntities` (10,000) instances;
 * past that, a message to an entity not in memory fails (MailboxFull, a 500
 * for the turn). Every turn makes a run entity, and a turn on a new thread a
 * thread entity too. At one minute (resident 60-90 s: the reaper looks every
 * 30 s) a node filled the cap after about 5,000 turns on new threads in a
 * minute (bench/scale); at five seconds (reaped 5-10 s after the last message)
 * the cap is about 1,000 new entities a second.
 */
export const EntityMaxIdleTime = "5 seconds"
