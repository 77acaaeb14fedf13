package dev.orderless.demo;

import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** The stream the demo publishes: every op, some twice, shuffled if asked, with the poison mixed in. */
final class Messages {
    private Messages() {
    }

    static List<byte[]> messages(List<Operation> ops, DemoOptions o) {
        Envelope envelope = new Envelope();
        Random random = new Random(o.seed() * 31 + 7);
        List<byte[]> messages = new ArrayList<>();
        for (Operation op : ops) {
            byte[] body = envelope.encode(op);
            messages.add(body);
            if (random.nextDouble() < o.duplicateRate()) {
                messages.add(body);   // redelivered right behind it, unless shuffled below
            }
        }
        if (o.shuffle()) {
            Collections.shuffle(messages, random);
        }
        for (byte[] poison : Poison.messages(o.poison())) {
            messages.add(random.nextInt(messages.size() + 1), poison);
        }
        return messages;
    }
}
