package dev.orderless.testing.chaos;

/** A fault a chaos run injects while its consumers work, each once, at a point of its progress. */
public enum Fault {
    /** One consumer's connections are cut and it is closed (what it held goes back to the queue); a new one starts. */
    KILL_CONSUMER("consumer killed"),
    /** Every consumer's broker connection is cut for two seconds. */
    CUT_BROKER("broker cut 2s"),
    /** Every consumer's MongoDB connection is cut for two seconds. */
    CUT_MONGO("MongoDB cut 2s");

    private final String described;

    Fault(String described) {
        this.described = described;
    }

    /** As the {@code [chaos]} row names it. */
    public String described() {
        return described;
    }
}
