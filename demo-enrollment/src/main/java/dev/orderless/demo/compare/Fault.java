package dev.orderless.demo.compare;

/** What goes wrong during a trial: once a third of its messages is published (stuck, kill) or applied (scale-out). */
enum Fault {
    NONE("none"),
    /** One consumer's handler stops (20 s in the full plan) on a live connection (a slow downstream call, a long GC pause). */
    STUCK("handler stuck"),
    /**
     * One consumer process dies: its broker connection is cut (what RabbitMQ sees of a SIGKILL: the socket
     * closes, its unacked messages go back to the queue) and it never comes back. Writes it had in flight
     * to MongoDB still land, as a killed process's would.
     */
    KILL("consumer killed"),
    /** The run starts with 1 consumer and 3 more join. */
    SCALE_OUT("scale-out 1 -> 4");

    final String label;

    Fault(String label) {
        this.label = label;
    }
}
