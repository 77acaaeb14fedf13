package dev.orderless.demo;

import picocli.CommandLine;

/** {@code --protocol}: how consume and publish talk to RabbitMQ, written as RabbitMQ writes it. */
enum Protocol {
    AMQP_0_9_1("amqp-0-9-1"),
    /** RabbitMQ 4: the broker dead-letters poison itself (orderless-rabbit-amqp10). */
    AMQP_1_0("amqp-1.0");

    private final String option;

    Protocol(String option) {
        this.option = option;
    }

    @Override
    public String toString() {
        return option;
    }

    /** Reads {@code --protocol}; anything else is refused naming the two there are. */
    static final class Converter implements CommandLine.ITypeConverter<Protocol> {
        @Override
        public Protocol convert(String value) {
            for (Protocol protocol : values()) {
                if (protocol.option.equals(value)) {
                    return protocol;
                }
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not a protocol: amqp-0-9-1 or amqp-1.0");
        }
    }

    /** The values {@code --help} lists. */
    static final class Values extends java.util.ArrayList<String> {
        Values() {
            super(java.util.List.of(AMQP_0_9_1.option, AMQP_1_0.option));
        }
    }
}
