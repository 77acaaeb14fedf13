package dev.orderless.demo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Bad messages of every kind the consumer must dead-letter, in turn. */
public final class Poison {
    private static final String[] KINDS = {
        "this is not json",
        "{\"entity\":\"student-1\",\"op\":\"delete\"}",
        "{\"entity\":\"student-1\",\"seq\":0,\"op\":\"delete\"}",
        "{\"entity\":\"student-1\",\"seq\":-%d,\"op\":\"delete\"}",
        "{\"entity\":\"student-1\",\"seq\":%d,\"op\":\"enroll\"}",
        "{\"entity\":\"student-1\",\"seq\":%d,\"op\":\"add\",\"field\":\"clubs\",\"element\":\"chess\"}",
        "{\"entity\":\"student-1\",\"seq\":%d,\"op\":\"assign\",\"field\":\"$set\",\"value\":1}",
        "{\"entity\":\"student-1\",\"seq\":%d,\"op\":\"assign\",\"field\":\"name.first\",\"value\":\"x\"}",
        "{\"entity\":\"student-1\",\"seq\":%d,\"op\":\"assign\",\"field\":\"_v\",\"value\":1}",
    };

    private Poison() {
    }

    public static List<byte[]> messages(int count) {
        List<byte[]> poison = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String body = String.format(KINDS[i % KINDS.length], i + 1);
            poison.add(body.getBytes(StandardCharsets.UTF_8));
        }
        return poison;
    }
}
