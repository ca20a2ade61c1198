// A receiver of the service's webhooks in C#, for the .NET Framework (here on Mono), with nothing
// but the framework:
//
//   mcs -out:ReceiveWebhooks.exe docs/examples/ReceiveWebhooks.cs
//   WEBHOOK_SECRET=whsec_… mono ReceiveWebhooks.exe 8080
//
// It listens on the port of its argument (or PORT) and takes each POST as a delivery: it verifies the
// Standard Webhooks signature (the HMAC-SHA256 of "id.timestamp.body" under the subscription's
// secret, a timestamp within 5 minutes of its clock), refuses a delivery that fails with 401, answers
// a delivery it received before (the same webhook-id) 204 without handling it again, and answers any
// other 204 at once, before handling it (here: printing its body on stdout, one line a delivery).
// What it says about itself goes to stderr. docs/webhooks.md explains each choice;
// receive-webhooks.mjs and receive_webhooks.py beside it do the same in Node.js and Python.
//
//   WEBHOOK_SECRET  the secret CreateWebhook (or RotateWebhookSecret) answered, whsec_…
using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using System.Threading;

public class WebhookVerificationException : Exception
{
    public WebhookVerificationException(string message) : base(message) { }
}

public static class WebhookSignature
{
    const long ToleranceSeconds = 5 * 60;

    /// <summary>The HMAC key: the base64 after "whsec_".</summary>
    public static byte[] KeyOf(string secret)
    {
        return Convert.FromBase64String(secret.StartsWith("whsec_") ? secret.Substring(6) : secret);
    }

    /// <summary>
    /// Throws unless one v1 signature of the header signs this delivery. body is the request's bytes
    /// exactly as received: the signature covers them, not a parse of them.
    /// </summary>
    public static void Verify(byte[] key, string id, string timestamp, string signatures, byte[] body)
    {
        if (string.IsNullOrEmpty(id) || string.IsNullOrEmpty(timestamp) || string.IsNullOrEmpty(signatures))
            throw new WebhookVerificationException("missing required headers");
        long sent;
        if (!long.TryParse(timestamp, out sent))
            throw new WebhookVerificationException("invalid timestamp");
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        // A stale delivery may be a replay of one captured earlier: refuse it either way off the clock.
        if (now - sent > ToleranceSeconds) throw new WebhookVerificationException("timestamp too old");
        if (sent - now > ToleranceSeconds) throw new WebhookVerificationException("timestamp too new");

        var prefix = Encoding.UTF8.GetBytes(id + "." + timestamp + ".");
        var signed = new byte[prefix.Length + body.Length];
        Buffer.BlockCopy(prefix, 0, signed, 0, prefix.Length);
        Buffer.BlockCopy(body, 0, signed, prefix.Length, body.Length);
        byte[] expected;
        using (var hmac = new HMACSHA256(key)) expected = Encoding.ASCII.GetBytes(Convert.ToBase64String(hmac.ComputeHash(signed)));

        // During a rotation the header carries two signatures, one per secret: any one may match.
        foreach (var versioned in signatures.Split(' '))
        {
            var comma = versioned.IndexOf(',');
            if (comma < 0 || versioned.Substring(0, comma) != "v1") continue;
            if (FixedTimeEquals(Encoding.ASCII.GetBytes(versioned.Substring(comma + 1)), expected)) return;
        }
        throw new WebhookVerificationException("no matching signature");
    }

    /// <summary>Compares in a time that does not tell how many leading bytes matched.</summary>
    static bool FixedTimeEquals(byte[] a, byte[] b)
    {
        if (a.Length != b.Length) return false;
        var difference = 0;
        for (var i = 0; i < a.Length; i++) difference |= a[i] ^ b[i];
        return difference == 0;
    }
}

public static class ReceiveWebhooks
{
    /// <summary>More than any event the service sends; a larger body is refused unread.</summary>
    const long MaxBodyBytes = 1024 * 1024;

    /// <summary>
    /// The webhook-ids of the deliveries received. A real receiver keeps them in its own database,
    /// written in the transaction that stores the delivery for its work, and keeps them for days.
    /// </summary>
    static readonly HashSet<string> Received = new HashSet<string>();

    static void Log(string message)
    {
        Console.Error.WriteLine("[ReceiveWebhooks] " + message);
    }

    /// <summary>
    /// The work a delivery asks for, done after its answer: the service waits for the answer (10 s at
    /// most), so a receiver stores the delivery, answers, and works from what it stored.
    /// </summary>
    static void Handle(byte[] body)
    {
        lock (Received) Console.Out.WriteLine(Encoding.UTF8.GetString(body));
    }

    static void Answer(HttpListenerResponse response, int status)
    {
        response.StatusCode = status;
        response.Close();
    }

    static void Take(HttpListenerContext context, byte[] key)
    {
        var request = context.Request;
        if (request.HttpMethod != "POST") { Answer(context.Response, 405); return; }
        // The service sends a Content-Length; a body without one is not a delivery of its.
        if (request.ContentLength64 < 0) { Answer(context.Response, 411); return; }
        if (request.ContentLength64 > MaxBodyBytes) { Answer(context.Response, 413); return; }
        var body = new byte[request.ContentLength64];
        using (var stream = request.InputStream)
        {
            var read = 0;
            while (read < body.Length)
            {
                var count = stream.Read(body, read, body.Length - read);
                if (count == 0) { Answer(context.Response, 400); return; }
                read += count;
            }
        }
        var id = request.Headers["webhook-id"];
        try
        {
            WebhookSignature.Verify(key, id, request.Headers["webhook-timestamp"], request.Headers["webhook-signature"], body);
        }
        catch (WebhookVerificationException error)
        {
            Log("Refused delivery " + id + ": " + error.Message);
            Answer(context.Response, 401);
            return;
        }
        bool duplicate;
        lock (Received) duplicate = !Received.Add(id);
        if (duplicate)
        {
            Log("Skipped delivery " + id + ": already received");
            Answer(context.Response, 204);
            return;
        }
        Answer(context.Response, 204);
        Handle(body);
    }

    public static int Main(string[] args)
    {
        var port = args.Length > 0 ? args[0] : Environment.GetEnvironmentVariable("PORT");
        var secret = Environment.GetEnvironmentVariable("WEBHOOK_SECRET");
        int number;
        if (!int.TryParse(port, out number) || string.IsNullOrEmpty(secret))
        {
            Log("Usage: WEBHOOK_SECRET=whsec_… mono ReceiveWebhooks.exe <port>");
            return 2;
        }
        var key = WebhookSignature.KeyOf(secret);
        Console.Out.Flush();
        var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
        stdout.AutoFlush = true;
        Console.SetOut(stdout);

        var listener = new HttpListener();
        listener.Prefixes.Add("http://*:" + number + "/");
        listener.Start();
        Log("Listening on port " + number);
        while (listener.IsListening)
        {
            var context = listener.GetContext();
            ThreadPool.QueueUserWorkItem(_ =>
            {
                try { Take(context, key); }
                catch (Exception error) { Log("Failed on a request: " + error.Message); }
            });
        }
        return 0;
    }
}
