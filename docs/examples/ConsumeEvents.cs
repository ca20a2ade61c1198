// A consumer of the service's integration events for .NET Framework 4.5 on Mono, with the
// RabbitMQ.Client that Debian ships (libmono-rabbitmq4.0-cil): the world the legacy service came
// from. Built and run from a clone of the project:
//
//   mcs -out:ConsumeEvents.exe -r:RabbitMQ.Client.dll -r:System.Json.dll -r:Mono.Posix.dll \
//     docs/examples/ConsumeEvents.cs
//   mono ConsumeEvents.exe crm.property-sales-events
//
// It does what docs/examples/consume-events.mjs does, and says the same on stderr: binds a durable
// queue (named by its argument, or EVENTS_QUEUE) to the service's topic exchange, with a dead-letter
// exchange and queue of its own (<queue>.dead-letters); checks each message is a CloudEvent; handles
// each event once (here: prints it on stdout, one JSON line an event) and acknowledges it only once
// handled; rejects, without requeueing, a message that is not an event, so the broker dead-letters
// it. docs/consuming-events.md explains each choice.
//
//   EVENTS_URL           the broker (default amqp://guest:guest@127.0.0.1:5672)
//   EVENTS_EXCHANGE      the service's exchange (default property-sales.events)
//   EVENTS_ROUTING_KEYS  comma-separated (default transaction.agents-changed,data.imported)
//   EVENTS_HANDLED_FILE  a file keeping the ids of handled events across restarts; without it they
//                        are kept in memory, and forgotten when the process ends
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Json;
using System.Linq;
using System.Text;
using System.Threading;
using Mono.Unix;
using Mono.Unix.Native;
using RabbitMQ.Client;
using RabbitMQ.Client.Events;

/// <summary>A message this consumer cannot handle, on any delivery.</summary>
class NotAnEventException : Exception
{
    public NotAnEventException(string message) : base(message) { }
}

static class ConsumeEvents
{
    static readonly TextWriter Out = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false)) { AutoFlush = true };
    static readonly UTF8Encoding StrictUtf8 = new UTF8Encoding(false, true);
    const int RetryMs = 2000;

    static void Log(string message)
    {
        Console.Error.WriteLine("[ConsumeEvents] " + message);
    }

    static string Env(string name, string fallback)
    {
        var value = Environment.GetEnvironmentVariable(name);
        return string.IsNullOrEmpty(value) ? fallback : value;
    }

    static int Main(string[] args)
    {
        var queue = args.Length > 0 ? args[0] : Environment.GetEnvironmentVariable("EVENTS_QUEUE");
        if (string.IsNullOrEmpty(queue))
        {
            Console.Error.WriteLine("Usage: mono ConsumeEvents.exe <queue> (or EVENTS_QUEUE=<queue>)");
            return 2;
        }
        var factory = FactoryFor(Env("EVENTS_URL", "amqp://guest:guest@127.0.0.1:5672"));
        var exchange = Env("EVENTS_EXCHANGE", "property-sales.events");
        var routingKeys = Env("EVENTS_ROUTING_KEYS", "transaction.agents-changed,data.imported")
            .Split(',').Select(key => key.Trim()).Where(key => key.Length > 0).ToArray();
        var handled = new HandledEvents(Environment.GetEnvironmentVariable("EVENTS_HANDLED_FILE"));
        // Ctrl-C or an orchestrator's SIGTERM: finish the event in hand, then close.
        var stopSignals = new[] { new UnixSignal(Signum.SIGINT), new UnixSignal(Signum.SIGTERM) };
        Func<bool> stopping = () => stopSignals.Any(signal => signal.IsSet);

        // The old client does not reconnect by itself: each turn connects, declares and consumes
        // until the connection is lost or a signal comes.
        while (!stopping())
        {
            IConnection connection;
            try
            {
                connection = factory.CreateConnection();
            }
            catch (Exception error)
            {
                Log("The broker is unreachable; retrying: " + error.Message);
                Thread.Sleep(RetryMs);
                continue;
            }
            try
            {
                var channel = connection.CreateModel();
                Declare(channel, queue, exchange, routingKeys);
                // A small prefetch, and one event at a time on this thread: a transaction's events
                // are handled in the order they were published.
                channel.BasicQos(0, 20, false);
                var consumer = new QueueingBasicConsumer(channel);
                channel.BasicConsume(queue, false, null, consumer);
                Log("Consuming " + queue + ", bound to " + exchange + " with " + string.Join(", ", routingKeys) + ".");
                while (!stopping())
                {
                    object delivery;
                    if (consumer.Queue.Dequeue(250, out delivery))
                        Handle(channel, (BasicDeliverEventArgs)delivery, handled);
                }
                // What was delivered and not acknowledged goes back to the queue, in its order.
                connection.Close(5000);
                Log("Stopped.");
                return 0;
            }
            catch (Exception error) when (error is EndOfStreamException || error is IOException
                || error is RabbitMQ.Client.Exceptions.OperationInterruptedException
                || error is RabbitMQ.Client.Exceptions.AlreadyClosedException)
            {
                Log("The consumer stopped; it starts again: " + (connection.CloseReason != null ? connection.CloseReason.ReplyText : error.Message));
                connection.Abort(1000);
                Thread.Sleep(RetryMs);
            }
        }
        Log("Stopped.");
        return 0;
    }

    /// <summary>The connection settings of an amqp:// URL, which this client cannot read itself.</summary>
    static ConnectionFactory FactoryFor(string url)
    {
        var uri = new Uri(url);
        var user = uri.UserInfo.Split(new[] { ':' }, 2);
        var path = Uri.UnescapeDataString(uri.AbsolutePath);
        return new ConnectionFactory
        {
            // The newest this client speaks; RabbitMQ takes it beside 0-9-1.
            Protocol = Protocols.AMQP_0_9,
            HostName = uri.Host,
            Port = uri.IsDefaultPort ? 5672 : uri.Port,
            UserName = user[0].Length > 0 ? Uri.UnescapeDataString(user[0]) : "guest",
            Password = user.Length > 1 ? Uri.UnescapeDataString(user[1]) : "guest",
            // amqp://host/ and amqp://host name the default virtual host, "/"; amqp://host/%2f too.
            VirtualHost = path.Length > 1 ? path.Substring(1) : "/",
            // Notices a broker that went silent, as a lost connection.
            RequestedHeartbeat = 30,
        };
    }

    /// <summary>
    /// The exchange as the service declares it (so either may start first), the dead-letter exchange
    /// and queue, and the queue: durable, not exclusive, never deleted by the broker, so events wait
    /// in it while this is down. A queue's arguments cannot change once it exists: a queue declared
    /// before without them must be deleted first, or given them through a policy.
    /// </summary>
    static void Declare(IModel channel, string queue, string exchange, string[] routingKeys)
    {
        const bool passive = false, durable = true, exclusive = false, autoDelete = false, isInternal = false, nowait = false;
        channel.ExchangeDeclare(exchange, ExchangeType.Topic, passive, durable, autoDelete, isInternal, nowait, null);
        var deadLetters = queue + ".dead-letters";
        channel.ExchangeDeclare(deadLetters, ExchangeType.Fanout, passive, durable, autoDelete, isInternal, nowait, null);
        channel.QueueDeclare(deadLetters, passive, durable, exclusive, autoDelete, nowait, null);
        channel.QueueBind(deadLetters, deadLetters, "", nowait, null);
        var arguments = new Hashtable { { "x-dead-letter-exchange", deadLetters } };
        channel.QueueDeclare(queue, passive, durable, exclusive, autoDelete, nowait, arguments);
        foreach (var routingKey in routingKeys)
            channel.QueueBind(queue, exchange, routingKey, nowait, null);
    }

    static void Handle(IModel channel, BasicDeliverEventArgs delivery, HandledEvents handled)
    {
        var messageId = delivery.BasicProperties.IsMessageIdPresent() ? delivery.BasicProperties.MessageId : null;
        JsonObject cloudEvent;
        try
        {
            cloudEvent = CloudEventOf(delivery.Body);
        }
        catch (NotAnEventException error)
        {
            // Delivered again it would fail again: rejected without requeueing, to the queue's
            // dead-letter exchange.
            Log("Rejected message " + (messageId ?? "(no id)") + ": not a CloudEvent (" + error.Message + ").");
            channel.BasicReject(delivery.DeliveryTag, false);
            return;
        }
        var id = (string)cloudEvent["id"];
        if (messageId != null && messageId != id)
            Log("Message " + messageId + " carries event " + id + "; the event's id counts.");
        if (handled.Contains(id))
        {
            Log("Skipped event " + id + ": already handled" + (delivery.Redelivered ? " (redelivered)" : "") + ".");
            channel.BasicAck(delivery.DeliveryTag, false);
            return;
        }
        try
        {
            // The handling: this consumer's own write, and the id with it.
            Out.WriteLine(cloudEvent.ToString());
            handled.Remember(id);
        }
        catch (Exception error)
        {
            // Not requeued: the next events are already here, and would overtake it. Ending the
            // process hands every unacknowledged message back to the queue, in its order.
            Log("Handling event " + id + " failed; stopping: " + error.Message);
            Environment.Exit(1);
        }
        channel.BasicAck(delivery.DeliveryTag, false);
    }

    /// <summary>
    /// The body as a CloudEvent in structured JSON mode (CloudEvents 1.0: the required attributes,
    /// the types of the optional ones, the names of extensions); throws NotAnEventException when it
    /// is not one. Members it does not know are kept, and ignored: new ones may be added.
    /// </summary>
    static JsonObject CloudEventOf(byte[] body)
    {
        string text;
        JsonValue json;
        try
        {
            text = StrictUtf8.GetString(body);
        }
        catch (DecoderFallbackException)
        {
            throw new NotAnEventException("the body is not UTF-8");
        }
        // System.Json reads each level of nesting in a call of its own: a body nested deeply enough
        // would overflow the stack.
        if (NestsDeeperThan(text, 64))
            throw new NotAnEventException("the body is nested too deeply");
        try
        {
            json = JsonValue.Parse(text);
        }
        catch (Exception error)
        {
            throw new NotAnEventException("the body is not JSON: " + error.Message);
        }
        var attributes = json as JsonObject;
        if (attributes == null)
            throw new NotAnEventException("the body is not a JSON object");
        if (StringOf(attributes, "specversion") != "1.0")
            throw new NotAnEventException("specversion is not 1.0");
        foreach (var name in new[] { "id", "source", "type", "time" })
            if (string.IsNullOrEmpty(StringOf(attributes, name)))
                throw new NotAnEventException(name + " is missing");
        DateTimeOffset time;
        if (!DateTimeOffset.TryParse((string)attributes["time"], CultureInfo.InvariantCulture, DateTimeStyles.None, out time))
            throw new NotAnEventException("time is not a timestamp");
        foreach (var member in attributes)
        {
            // data is the payload, data_base64 its binary form: not attributes.
            if (member.Key == "data" || member.Key == "data_base64")
                continue;
            if (!member.Key.All(c => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
                throw new NotAnEventException("the attribute name " + member.Key + " is not lower-case letters and digits");
            // A string, a number or a boolean; null reads as absent.
            if (member.Value != null && (member.Value.JsonType == JsonType.Object || member.Value.JsonType == JsonType.Array))
                throw new NotAnEventException(member.Key + " is not a string, a number or a boolean");
        }
        foreach (var name in new[] { "subject", "datacontenttype", "dataschema" })
            if (attributes.ContainsKey(name) && attributes[name] != null && StringOf(attributes, name) == null)
                throw new NotAnEventException(name + " is not a string");
        return attributes;
    }

    /// <summary>The attribute's value when it is a string, or null.</summary>
    static string StringOf(JsonObject attributes, string name)
    {
        JsonValue value;
        return attributes.TryGetValue(name, out value) && value != null && value.JsonType == JsonType.String
            ? (string)value
            : null;
    }

    /// <summary>Whether the JSON text opens more than `limit` objects or arrays inside each other.</summary>
    static bool NestsDeeperThan(string text, int limit)
    {
        var depth = 0;
        var inString = false;
        for (var i = 0; i < text.Length; i++)
        {
            var c = text[i];
            if (inString)
            {
                if (c == '\\')
                    i++;
                else if (c == '"')
                    inString = false;
            }
            else if (c == '"')
                inString = true;
            else if ((c == '{' || c == '[') && ++depth > limit)
                return true;
            else if (c == '}' || c == ']')
                depth--;
        }
        return false;
    }
}

/// <summary>
/// The ids of the events already handled. A real consumer keeps them in its own database and writes
/// each id in the same transaction as the change the event caused (a table keyed by the id: a second
/// insert of the same id fails, and the change rolls back with it), so an event is handled once or
/// not at all. This example prints, then appends the id: a crash between the two prints the event
/// again. Keep the ids longer than a redelivery can take (days, not minutes); then they may be pruned.
/// </summary>
class HandledEvents
{
    readonly HashSet<string> ids = new HashSet<string>();
    readonly string file;

    public HandledEvents(string file)
    {
        this.file = string.IsNullOrEmpty(file) ? null : file;
        if (this.file != null && File.Exists(this.file))
            ids.UnionWith(File.ReadAllLines(this.file).Where(line => line.Length > 0));
    }

    public bool Contains(string id)
    {
        return ids.Contains(id);
    }

    public void Remember(string id)
    {
        ids.Add(id);
        if (file != null)
            File.AppendAllText(file, id + "\n");
    }
}
