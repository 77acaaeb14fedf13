package dev.orderless.demo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Bad messages of every kind the consumer must dead-letter, in turn. */
public final class Poison {
    /** Each body is unique ({@code %1$d} is the message's number), so a dead-letter queue can be checked by body. */
    private static final String[] KINDS = {
        "this is not json (poison %1$d)",
        "{\"entity\":\"poison-%1$d\",\"op\":\"delete\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":0,\"op\":\"delete\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":-%1$d,\"op\":\"delete\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":%1$d,\"op\":\"enroll\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":%1$d,\"op\":\"add\",\"field\":\"clubs\",\"element\":\"chess\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":%1$d,\"op\":\"assign\",\"field\":\"$set\",\"value\":1}",
        "{\"entity\":\"poison-%1$d\",\"seq\":%1$d,\"op\":\"assign\",\"field\":\"name.first\",\"value\":\"x\"}",
        "{\"entity\":\"poison-%1$d\",\"seq\":%1$d,\"op\":\"assign\",\"field\":\"_v\",\"value\":1}",
    };

    private Poison() {
    }

    /** {@code count} bad messages, numbered from 1. */
    public static List<byte[]> messages(int count) {
        return messages(count, 0);
    }

    /** {@code count} bad messages numbered after {@code before}, so that several batches stay distinct. */
    public static List<byte[]> messages(int count, int before) {
        List<byte[]> poison = new ArrayList<>(count);
        for (int i = before; i < before + count; i++) {
            String body = String.format(KINDS[i % KINDS.length], i + 1);
            poison.add(body.getBytes(StandardCharsets.UTF_8));
        }
        return poison;
    }
}
