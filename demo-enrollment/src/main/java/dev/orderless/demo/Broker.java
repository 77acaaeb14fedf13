package dev.orderless.demo;

import picocli.CommandLine;

/** {@code --broker}: what {@code run} and {@code chaos} publish to and consume from. */
enum Broker {
    RABBITMQ("rabbitmq"),
    /** A topic read by one share group (orderless-kafka); an embedded KRaft broker unless one is named. */
    KAFKA("kafka");

    private final String option;

    Broker(String option) {
        this.option = option;
    }

    @Override
    public String toString() {
        return option;
    }

    /** Reads {@code --broker}; anything else is refused naming the two there are. */
    static final class Converter implements CommandLine.ITypeConverter<Broker> {
        @Override
        public Broker convert(String value) {
            for (Broker broker : values()) {
                if (broker.option.equals(value)) {
                    return broker;
                }
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not a broker: rabbitmq or kafka");
        }
    }

    /** The values {@code --help} lists. */
    static final class Values extends java.util.ArrayList<String> {
        Values() {
            super(java.util.List.of(RABBITMQ.option, KAFKA.option));
        }
    }
}
