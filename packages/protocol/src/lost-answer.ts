/** What a person is told about a call that may have run but whose answer was lost (a crash, a lost worker). */
export const LOST_ANSWER = "This call may have run, but its answer was lost.";
